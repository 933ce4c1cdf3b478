import type { PostgresDb } from '../store/index.js'
import { checkConversationId, checkMessages, excessAtHead, windowOf, type ConversationMemory } from './memory.js'
import type { AiMessage } from './runtime.js'

/**
 * The schema of conversation memory in PostgreSQL, one entry per version (`PostgresDb.migrate`).
 * A conversation id is the client's string: kept as its UTF-8 bytes, so any id (a NUL in it too)
 * is one key, compared byte for byte as LMDB does.
 */
export const MEMORY_MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_ai_memory (
     conversation_id bytea NOT NULL,
     seq bigint NOT NULL,
     role text NOT NULL,
     message json NOT NULL,
     PRIMARY KEY (conversation_id, seq)
   )`
]

/**
 * Conversation memory in PostgreSQL, shared by every node on the database: a turn on one node
 * reads the history another node appended. An append and its trim run in one transaction that
 * holds the conversation's advisory lock, so appends from several nodes never interleave and the
 * bound holds at every commit; a resolved append is committed.
 */
export class PostgresConversationMemory implements ConversationMemory {
  readonly kind = 'postgres'

  constructor(
    private readonly db: PostgresDb,
    readonly maxMessages: number
  ) {}

  /** Creates or migrates the table. */
  async start(): Promise<void> {
    await this.db.migrate('ai-memory', MEMORY_MIGRATIONS)
  }

  async append(conversationId: string, messages: AiMessage[]): Promise<void> {
    checkConversationId(conversationId)
    checkMessages(messages)
    if (messages.length === 0) return
    const id = Buffer.from(conversationId)
    await this.db.transaction(async (sql) => {
      await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('platform_ai_memory:' || encode($1, 'hex'), 0))`, [
        id
      ])
      const { rows } = await sql.query<{ seq: string; role: AiMessage['role'] }>(
        'SELECT seq, role FROM platform_ai_memory WHERE conversation_id = $1 ORDER BY seq',
        [id]
      )
      const first = rows.length === 0 ? 0 : Number(rows[rows.length - 1]!.seq) + 1
      await sql.query(
        `INSERT INTO platform_ai_memory (conversation_id, seq, role, message)
         SELECT $1::bytea, s, r, m FROM unnest($2::bigint[], $3::text[], $4::json[]) AS x(s, r, m)`,
        [id, messages.map((_, i) => first + i), messages.map((m) => m.role), messages.map((m) => JSON.stringify(m))]
      )
      const kept = [
        ...rows.map((r) => ({ role: r.role, seq: Number(r.seq) })),
        ...messages.map((m, i) => ({ role: m.role, seq: first + i }))
      ]
      const drop = excessAtHead(kept, this.maxMessages)
      if (drop > 0)
        await sql.query('DELETE FROM platform_ai_memory WHERE conversation_id = $1 AND seq <= $2', [
          id,
          kept[drop - 1]!.seq
        ])
    })
  }

  async read(conversationId: string, limit?: number): Promise<AiMessage[]> {
    checkConversationId(conversationId)
    // checked before the query: a bad limit changes nothing and costs no round trip
    windowOf([], limit)
    const { rows } = await this.db.query<{ message: AiMessage }>(
      'SELECT message FROM platform_ai_memory WHERE conversation_id = $1 ORDER BY seq',
      [Buffer.from(conversationId)]
    )
    return windowOf(
      rows.map((r) => r.message),
      limit
    )
  }

  async clear(conversationId: string): Promise<boolean> {
    checkConversationId(conversationId)
    const { rowCount } = await this.db.query('DELETE FROM platform_ai_memory WHERE conversation_id = $1', [
      Buffer.from(conversationId)
    ])
    return (rowCount ?? 0) > 0
  }
}
