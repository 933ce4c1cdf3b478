/**
 * GovernanceMemorySink (opt-in, `platform.ai.governance.memory.enabled`): every deny or prefer is
 * kept in a LessonStore (LMDB, or PostgreSQL for every node) as a provenance-tagged lesson under
 * each namespace of its subject (the user's, and also the conversation's and session's), so the
 * learning-signal loop recalls it after a restart in the same subject order as the decision log.
 * Operators add facts (lessons of their own) and remove any lesson by its id through the admin
 * routes. Expired (`ttl-seconds`) or below-floor (`min-confidence`) lessons are dropped on read.
 */
import type { DecisionEntry } from '../contracts/index.js'
import type { Lesson, LessonKey, LessonStore } from './lesson-store.js'

/** A lesson as recalled: `id` names it within its namespace for as long as it is kept. */
export type Fact = { id: string } & Lesson

/**
 * Operators' facts are kept apart from policy lessons, under `operator:<namespace>` (no subject
 * namespace starts so), so the lessons piling up under a user never bury a fact and a turn reads
 * a subject's few facts directly.
 */
const OPERATOR = 'operator:'

/** A lesson's id is its key below the namespace, so a removal is one lookup, never a scan. */
const factId = (key: LessonKey): string =>
  key[0].startsWith(OPERATOR) ? `op-${key[1]}-${key[2]}` : `${key[1]}-${key[2]}`
const FACT_ID = /^(op-)?(\d{1,16})-(\d{1,16})$/

/** How sure a lesson is: a hard deny is certain, a soft preference less so. */
export const CONFIDENCE = { deny: 1.0, prefer: 0.7 } as const

/** Snapshot keys of a subject, tightest first, with the namespace prefix each maps to. */
export const SUBJECT_DIMENSIONS = [
  ['conversation_id', 'conversation'],
  ['session_id', 'session'],
  ['user_id', 'user']
] as const

/** The namespace of one subject dimension, e.g. `user:alice`. */
export const namespaceKey = (prefix: (typeof SUBJECT_DIMENSIONS)[number][1], id: string): string => `${prefix}:${id}`

/**
 * Every namespace a decision's subject has, tightest first. An anonymous decision has none: a
 * shared bucket would hand one caller's lessons to every other anonymous caller.
 */
export function namespacesOf(snapshot: Record<string, unknown>): string[] {
  const out: string[] = []
  for (const [key, prefix] of SUBJECT_DIMENSIONS) {
    const v = snapshot[key]
    if (typeof v === 'string' && v !== '') out.push(namespaceKey(prefix, v))
  }
  return out
}

/** The guidance line a deny or prefer teaches; the feedback loop renders log entries the same way. */
export function lessonText(e: DecisionEntry): string {
  const preferred = e.context_snapshot.preferred
  return e.decision === 'prefer' && typeof preferred === 'string'
    ? `Prefer: ${preferred} (${e.reason})`
    : `Denied by ${e.policy_name}: ${e.reason}`
}

/** Stored lessons one recall examines at most. */
export const RECALL_SCAN = 500
/** Lessons kept per namespace (newest first); older ones are dropped when a new one is written. */
export const MAX_LESSONS = 200

export class GovernanceMemorySink {
  constructor(
    private readonly db: LessonStore,
    readonly ttlSeconds: number,
    readonly minConfidence: number,
    private readonly now: () => number = Date.now
  ) {}

  /**
   * Writes a lesson for a deny or prefer entry, once per namespace of its subject; other
   * decisions and anonymous ones are ignored.
   */
  accept(e: DecisionEntry): Promise<void> | undefined {
    if (e.decision !== 'deny' && e.decision !== 'prefer') return undefined
    const namespaces = namespacesOf(e.context_snapshot)
    if (namespaces.length === 0) return undefined
    const t = this.now()
    const base = {
      text: lessonText(e),
      confidence: CONFIDENCE[e.decision],
      createdAt: new Date(t).toISOString(),
      expiresAt: this.ttlSeconds > 0 ? t + this.ttlSeconds * 1000 : 0,
      provenance: {
        policy: e.policy_name,
        source: e.policy_source,
        version: e.policy_version,
        decision: e.decision,
        timestamp: e.timestamp
      }
    }
    const writes = namespaces.map((namespace) => {
      const lesson: Lesson = { namespace, ...base }
      return this.db.put(namespace, t, lesson).then(() => this.prune(namespace))
    })
    return Promise.all(writes).then(() => undefined)
  }

  /**
   * Writes an operator's fact under one namespace, with the same TTL as a policy's lesson and a
   * cap of its own (MAX_LESSONS facts per namespace); resolves with the fact as recall lists it.
   */
  async add(namespace: string, text: string, principal: string, confidence: number = CONFIDENCE.deny): Promise<Fact> {
    const t = this.now()
    const createdAt = new Date(t).toISOString()
    const lesson: Lesson = {
      namespace,
      text,
      confidence,
      createdAt,
      expiresAt: this.ttlSeconds > 0 ? t + this.ttlSeconds * 1000 : 0,
      provenance: { source: 'operator', principal, timestamp: createdAt }
    }
    const key = await this.db.put(OPERATOR + namespace, t, lesson)
    await this.prune(key[0])
    return { id: factId(key), ...lesson }
  }

  /** Removes the lesson or fact `id` of a namespace; false when it holds none by that id (or it expired). */
  async remove(namespace: string, id: string): Promise<boolean> {
    const m = FACT_ID.exec(id)
    if (m === null) return false
    const key: LessonKey = [(m[1] === undefined ? '' : OPERATOR) + namespace, Number(m[2]), Number(m[3])]
    const lesson = await this.db.get(key)
    if (lesson === undefined || (lesson.expiresAt !== 0 && lesson.expiresAt <= this.now())) return false
    return await this.db.remove(key)
  }

  /** Drops a namespace's expired lessons and those beyond its newest MAX_LESSONS, so the store stays bounded. */
  private async prune(namespace: string): Promise<void> {
    const t = this.now()
    let kept = 0
    const drop: LessonKey[] = []
    for (const { key, value } of await this.db.newest(namespace)) {
      if ((value.expiresAt !== 0 && value.expiresAt <= t) || kept >= MAX_LESSONS) drop.push(key)
      else kept++
    }
    await Promise.all(drop.map((k) => this.db.remove(k)))
  }

  /** Live policy lessons and operator facts of a namespace, newest first, at most `limit` (what admin lists). */
  async recall(namespace: string, limit = 10): Promise<Fact[]> {
    const both = [...(await this.lessons(namespace, limit)), ...(await this.facts(namespace, limit))]
    // ISO times of one clock sort as strings; a stable sort keeps a bucket's own order on ties
    return both.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)).slice(0, limit)
  }

  /** Live policy lessons of a namespace, newest first, at most `limit`. */
  lessons(namespace: string, limit = 10): Promise<Fact[]> {
    return this.scan(namespace, limit)
  }

  /** Live operator facts of a namespace, newest first, at most `limit`. */
  facts(namespace: string, limit = 10): Promise<Fact[]> {
    return this.scan(OPERATOR + namespace, limit)
  }

  /**
   * Live entries under one key prefix, newest first, at most `limit`. A read looks at no more than
   * RECALL_SCAN stored entries, so expired ones piling up never make a turn slow.
   */
  private async scan(prefix: string, limit: number): Promise<Fact[]> {
    const t = this.now()
    const out: Fact[] = []
    for (const { key, value } of await this.db.newest(prefix, RECALL_SCAN)) {
      if (value.expiresAt !== 0 && value.expiresAt <= t) continue
      if (value.confidence < this.minConfidence) continue
      out.push({ id: factId(key), ...value })
      if (out.length >= limit) break
    }
    return out
  }
}
