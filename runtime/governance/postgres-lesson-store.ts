/**
 * The governance memory sink's lessons and operators' facts in PostgreSQL, shared by every node on
 * the database: a fact an operator adds through one node reaches the turns every node runs, and a
 * lesson a policy teaches on one node is recalled on the others. The sequence of a key comes from
 * the database, so two nodes writing under one prefix in the same millisecond never share a key.
 * A prefix holds a client's id: it is kept as its UTF-8 bytes, so any id is one key.
 */
import type { PostgresDb } from '../store/index.js'
import type { Lesson, LessonEntry, LessonKey, LessonStore } from './lesson-store.js'

/** The schema, one entry per version (`PostgresDb.migrate`). */
export const LESSON_MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_governance_lessons (
     prefix bytea NOT NULL,
     at bigint NOT NULL,
     seq bigserial NOT NULL,
     lesson json NOT NULL,
     PRIMARY KEY (prefix, at, seq)
   )`
]

export class PostgresLessonStore implements LessonStore {
  constructor(private readonly db: PostgresDb) {}

  /** Creates or migrates the table. */
  async start(): Promise<void> {
    await this.db.migrate('governance-lessons', LESSON_MIGRATIONS)
  }

  async put(prefix: string, t: number, lesson: Lesson): Promise<LessonKey> {
    const { rows } = await this.db.query<{ seq: string }>(
      'INSERT INTO platform_governance_lessons (prefix, at, lesson) VALUES ($1, $2, $3) RETURNING seq',
      [Buffer.from(prefix), t, JSON.stringify(lesson)]
    )
    return [prefix, t, Number(rows[0]!.seq)]
  }

  async get(key: LessonKey): Promise<Lesson | undefined> {
    const { rows } = await this.db.query<{ lesson: Lesson }>(
      'SELECT lesson FROM platform_governance_lessons WHERE prefix = $1 AND at = $2 AND seq = $3',
      [Buffer.from(key[0]), key[1], key[2]]
    )
    return rows[0]?.lesson
  }

  async remove(key: LessonKey): Promise<boolean> {
    const { rowCount } = await this.db.query(
      'DELETE FROM platform_governance_lessons WHERE prefix = $1 AND at = $2 AND seq = $3',
      [Buffer.from(key[0]), key[1], key[2]]
    )
    return (rowCount ?? 0) > 0
  }

  async newest(prefix: string, limit?: number): Promise<LessonEntry[]> {
    const { rows } = await this.db.query<{ at: string; seq: string; lesson: Lesson }>(
      `SELECT at, seq, lesson FROM platform_governance_lessons WHERE prefix = $1
        ORDER BY at DESC, seq DESC LIMIT $2`,
      [Buffer.from(prefix), limit ?? null]
    )
    return rows.map((r) => ({ key: [prefix, Number(r.at), Number(r.seq)], value: r.lesson }))
  }
}
