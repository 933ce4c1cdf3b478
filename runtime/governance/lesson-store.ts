/**
 * Where the governance memory sink keeps its lessons and operators' facts: under a key prefix (a
 * namespace, or `operator:` and a namespace), each at its instant and a sequence that breaks ties.
 * In the data directory's LMDB (one node), or in PostgreSQL (`postgres-lesson-store.ts`, every node).
 */
import type { Database } from 'lmdb'

/** Where a lesson came from: a policy decision, or an operator who wrote it as a fact. */
export type Provenance =
  | { policy: string; source: string; version: string; decision: 'deny' | 'prefer'; timestamp: string }
  | { source: 'operator'; principal: string; timestamp: string }

export interface Lesson {
  namespace: string
  text: string
  confidence: number
  createdAt: string
  /** Epoch ms; 0 means no expiry. */
  expiresAt: number
  provenance: Provenance
}

/** `[prefix, epoch ms, sequence]`: a prefix's entries are adjacent, in time order. */
export type LessonKey = [string, number, number]

export interface LessonEntry {
  key: LessonKey
  value: Lesson
}

export interface LessonStore {
  /** Keeps `lesson` under `prefix` at `t`; resolves to its key once kept. */
  put(prefix: string, t: number, lesson: Lesson): Promise<LessonKey>
  get(key: LessonKey): Promise<Lesson | undefined>
  /** Resolves true when it held the key. */
  remove(key: LessonKey): Promise<boolean>
  /** The entries under `prefix`, newest first, at most `limit` (all when absent). */
  newest(prefix: string, limit?: number): Promise<LessonEntry[]>
}

/** Lessons in a named LMDB database; the sequence counts up from 0 in this process. */
export class LmdbLessonStore implements LessonStore {
  private seq = 0

  constructor(private readonly db: Database<Lesson, LessonKey>) {}

  async put(prefix: string, t: number, lesson: Lesson): Promise<LessonKey> {
    const key: LessonKey = [prefix, t, this.seq++]
    await this.db.put(key, lesson)
    return key
  }

  async get(key: LessonKey): Promise<Lesson | undefined> {
    return this.db.get(key)
  }

  remove(key: LessonKey): Promise<boolean> {
    return this.db.remove(key)
  }

  async newest(prefix: string, limit?: number): Promise<LessonEntry[]> {
    const out: LessonEntry[] = []
    for (const { key, value } of this.db.getRange({
      start: [prefix, Number.MAX_SAFE_INTEGER],
      end: [prefix, 0],
      reverse: true,
      ...(limit !== undefined ? { limit } : {})
    }))
      out.push({ key, value })
    return out
  }
}
