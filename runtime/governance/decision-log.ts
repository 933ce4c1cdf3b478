/**
 * GovernanceDecisionLog: every policy evaluation the gate runs, newest kept in a ring buffer
 * (`platform.ai.governance.decision-log.capacity`) and all of them in LMDB up to a retention
 * bound. It also answers the learning-signal loop: recent deny and prefer decisions for a subject,
 * from an index by subject kept beside the ring. With `anonymous`, the evaluations of turns that
 * run for nobody (no authenticated user) live in a part of their own, their denials counted and
 * sampled, so a flood of anonymous turns never pushes a real turn's decisions out.
 */
import type { Database } from 'lmdb'
import {
  SplitLog,
  type AnonymousDeniedCounts,
  type AnonymousPartOptions,
  type Columns,
  type EntryKind,
  type LogKey,
  type LogPage,
  type LogPart,
  type PostgresLog,
  type WriteFailureReport
} from '../store/index.js'
import type { DecisionEntry, DecisionValue } from '../contracts/index.js'

/** Where the evaluations of anonymous turns go, and who counts their denials (sorted by `decisionKind`). */
export type AnonymousDecisions = Omit<AnonymousPartOptions<DecisionEntry>, 'kindOf'>

/** A turn runs for a user only when the caller was authenticated: the snapshot's user_id is theirs. */
export function decisionKind(e: DecisionEntry): EntryKind {
  const user = e.context_snapshot.user_id
  if (typeof user === 'string' && user !== '') return 'kept'
  return e.decision === 'deny' || e.decision === 'error' ? 'anonymous-denied' : 'anonymous'
}

export interface Subject {
  conversationId?: string | null
  sessionId?: string | null
  userId?: string | null
}

/** Deny and prefer entries kept per subject key for the learning-signal loop, newest last. */
export const PER_SUBJECT = 64
/** Subject keys indexed at most; the least recently recorded go first. */
export const MAX_SUBJECTS = 10_000
/**
 * The log stores entries as rows: the fields that differ between a turn's evaluations first, so
 * a row usually ends after them (the rest repeat the previous row's).
 */
export const DECISION_COLUMNS: Columns<DecisionEntry> = {
  names: [
    'policy_name',
    'evaluation_ms',
    'decision',
    'reason',
    'policy_source',
    'policy_version',
    'timestamp',
    'context_snapshot'
  ],
  row: (e, into = new Array<unknown>(8)) => {
    into[0] = e.policy_name
    into[1] = e.evaluation_ms
    into[2] = e.decision
    into[3] = e.reason
    into[4] = e.policy_source
    into[5] = e.policy_version
    into[6] = e.timestamp
    into[7] = e.context_snapshot
    return into
  },
  changed: (p, e, into) => {
    let m = 0
    if (p.policy_name !== e.policy_name) {
      into[0] = e.policy_name
      m |= 1
    }
    if (p.evaluation_ms !== e.evaluation_ms) {
      into[1] = e.evaluation_ms
      m |= 2
    }
    if (p.decision !== e.decision) {
      into[2] = e.decision
      m |= 4
    }
    if (p.reason !== e.reason) {
      into[3] = e.reason
      m |= 8
    }
    if (p.policy_source !== e.policy_source) {
      into[4] = e.policy_source
      m |= 16
    }
    if (p.policy_version !== e.policy_version) {
      into[5] = e.policy_version
      m |= 32
    }
    if (p.timestamp !== e.timestamp) {
      into[6] = e.timestamp
      m |= 64
    }
    if (p.context_snapshot !== e.context_snapshot) {
      into[7] = e.context_snapshot
      m |= 128
    }
    return m
  },
  // the gate's field order
  entry: (v) => ({
    timestamp: v[6] as string,
    policy_name: v[0] as string,
    policy_source: v[4] as string,
    policy_version: v[5] as string,
    decision: v[2] as DecisionValue,
    reason: v[3] as string,
    evaluation_ms: v[1] as number,
    context_snapshot: v[7] as Record<string, unknown>
  })
}
const DIMENSIONS = [
  ['conversation_id', 'conversationId'],
  ['session_id', 'sessionId'],
  ['user_id', 'userId']
] as const

export class GovernanceDecisionLog {
  private readonly log: SplitLog<DecisionEntry>
  private readonly shared: PostgresLog<DecisionEntry> | undefined
  private readonly listeners: ((e: DecisionEntry) => void)[] = []
  /**
   * Deny and prefer entries by `<snapshot key>\0<id>`: a turn looks up its subject without
   * scanning the ring, which holds mostly admits. Only entries recorded by this process.
   */
  private readonly bySubject = new Map<string, DecisionEntry[]>()

  constructor(
    capacity: number,
    db?: Database<DecisionEntry, LogKey>,
    retention = 100_000,
    onWriteFailure?: WriteFailureReport,
    anonymous?: AnonymousDecisions,
    /** Cluster mode: every entry kept in PostgreSQL (instead of `db`), and `read` lists every node's. */
    shared?: PostgresLog<DecisionEntry>,
    /** How long entries wait for more before they are written together (RetainedLogOptions.flushMs). */
    flushMs = 0
  ) {
    this.shared = shared
    this.log = new SplitLog(
      {
        name: 'decisions',
        capacity,
        db,
        retention,
        // pages written before rows left a repeated snapshot out
        sharedField: 'context_snapshot',
        columns: DECISION_COLUMNS,
        onWriteFailure,
        flushMs
      },
      anonymous === undefined ? undefined : { ...anonymous, kindOf: decisionKind },
      shared
    )
  }

  get capacity(): number {
    return this.log.capacity
  }

  /** Called for every recorded entry (the memory sink listens). A throwing listener is ignored. */
  onRecord(fn: (e: DecisionEntry) => void): void {
    this.listeners.push(fn)
  }

  /** Records without waiting: a turn never waits on the disk; a failed write is reported by the log. */
  record(e: DecisionEntry): void {
    void this.log.append(e)
    if (e.decision === 'deny' || e.decision === 'prefer') this.index(e)
    for (const fn of this.listeners) {
      try {
        fn(e)
      } catch {
        /* a sink never breaks a turn */
      }
    }
  }

  /**
   * Resolves once every entry recorded so far is committed, writing the entries still waiting for
   * their window at once; an answer that acknowledges a turn (an interaction's 200) waits for it,
   * the turn itself never does. Never rejects: a failed write is reported by the log.
   */
  written(): Promise<void> {
    return this.log.written().catch(() => {})
  }

  /** The newest `limit` entries, newest first; beyond the ring, read from LMDB. */
  recent(limit: number): DecisionEntry[] {
    return this.log.newest(limit)
  }

  /**
   * One page of entries below the cursor (from the newest without one), newest first, with the
   * cursor of the next page when older ones remain; undefined for a bad cursor. `part` lists
   * only authenticated turns' entries (`main`) or only anonymous ones.
   */
  page(limit: number, cursor?: string, part?: LogPart): LogPage<DecisionEntry> | undefined {
    return this.log.page(limit, cursor, part)
  }

  /** `page` of the log every node shares when there is one (each entry with its `node`), else of this node's. */
  read(limit: number, cursor?: string, part?: LogPart): Promise<LogPage<DecisionEntry> | undefined> {
    if (this.shared === undefined) return Promise.resolve(this.page(limit, cursor, part))
    return this.shared.page(limit, cursor, part)
  }

  get anonymousDenied(): AnonymousDeniedCounts {
    return this.log.anonymousDenied
  }

  get size(): number {
    return this.log.size
  }

  private index(e: DecisionEntry): void {
    for (const [key] of DIMENSIONS) {
      const id = e.context_snapshot[key]
      if (typeof id !== 'string' || id === '') continue
      const k = `${key}\0${id}`
      let list = this.bySubject.get(k)
      if (list === undefined) list = []
      // re-inserted so the map's order is least recently recorded first
      else this.bySubject.delete(k)
      list.push(e)
      if (list.length > PER_SUBJECT) list.shift()
      this.bySubject.set(k, list)
      if (this.bySubject.size > MAX_SUBJECTS) this.bySubject.delete(this.bySubject.keys().next().value!)
    }
  }

  /**
   * Recent deny and/or prefer entries (`decisions`) for a subject, recorded by this process,
   * newest first: the conversation's if it has any, else the session's, else the user's (the
   * learning-signal loop's subject order). Each subject keeps its newest 64.
   */
  forSubject(subject: Subject, decisions: readonly string[] = ['deny', 'prefer'], limit = 10): DecisionEntry[] {
    // every turn asks, and until a deny or prefer is recorded there is no key worth building
    if (this.bySubject.size === 0) return []
    for (const [key, field] of DIMENSIONS) {
      const id = subject[field]
      if (id === undefined || id === null || id === '') continue
      const list = this.bySubject.get(`${key}\0${id}`)
      if (list === undefined) continue
      const out: DecisionEntry[] = []
      for (let i = list.length - 1; i >= 0 && out.length < limit; i--)
        if (decisions.includes(list[i]!.decision)) out.push(list[i]!)
      if (out.length > 0) return out
    }
    return []
  }
}
