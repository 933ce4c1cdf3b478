/**
 * GovernanceDecisionLog: every policy evaluation the gate runs, newest kept in a ring buffer
 * (`platform.ai.governance.decision-log.capacity`) and all of them in LMDB up to a retention
 * bound. It also answers the learning-signal loop: recent deny and prefer decisions for a subject.
 */
import type { Database } from 'lmdb'
import { RetainedLog, type LogKey, type WriteFailureReport } from '../store/index.js'
import type { DecisionEntry } from '../contracts/index.js'

export interface Subject {
  conversationId?: string | null
  sessionId?: string | null
  userId?: string | null
}

export class GovernanceDecisionLog {
  private readonly log: RetainedLog<DecisionEntry>
  private readonly listeners: ((e: DecisionEntry) => void)[] = []

  constructor(
    capacity: number,
    db?: Database<DecisionEntry, LogKey>,
    retention = 100_000,
    onWriteFailure?: WriteFailureReport
  ) {
    this.log = new RetainedLog({ name: 'decisions', capacity, db, retention, onWriteFailure })
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
    for (const fn of this.listeners) {
      try {
        fn(e)
      } catch {
        /* a sink never breaks a turn */
      }
    }
  }

  /** The newest `limit` entries, newest first; beyond the ring, read from LMDB. */
  recent(limit: number): DecisionEntry[] {
    return this.log.newest(limit)
  }

  get size(): number {
    return this.log.size
  }

  /**
   * Recent entries of the given decisions for a subject, newest first: the conversation's if it
   * has any, else the session's, else the user's (the learning-signal loop's subject order, docs/governance.md).
   */
  forSubject(subject: Subject, decisions: readonly string[] = ['deny', 'prefer'], limit = 10): DecisionEntry[] {
    const all = this.log.inMemory()
    const keys: [string, string | null | undefined][] = [
      ['conversation_id', subject.conversationId],
      ['session_id', subject.sessionId],
      ['user_id', subject.userId]
    ]
    for (const [key, value] of keys) {
      if (value === undefined || value === null || value === '') continue
      const out: DecisionEntry[] = []
      for (const e of all) {
        if (e.context_snapshot[key] === value && decisions.includes(e.decision)) {
          out.push(e)
          if (out.length >= limit) break
        }
      }
      if (out.length > 0) return out
    }
    return []
  }
}
