/**
 * Session-dialect sessions in PostgreSQL, shared by every node on the database: a session opened
 * on one node continues on any other (no sticky sessions). The record is kept as `json` beside
 * the columns the bounds count on; each subscription is a row of its own, deleted with its
 * session. Creates take one transaction-scoped advisory lock, so the per-principal, per-address,
 * anonymous and server-wide bounds hold across the nodes.
 */
import { PlatformError } from '../contracts/index.js'
import { PostgresPool, type PostgresDb } from '../store/index.js'
import { addressBucket } from '../http/index.js'
import { MCP_ERRORS } from './errors.js'
import type { SessionLimits, SessionOwner } from './session-quota.js'
import type { Admitted, KeptSession, SessionRecord, SessionRecords } from './session-records.js'

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_mcp_sessions (
     id text COLLATE "C" PRIMARY KEY,
     principal text COLLATE "C",
     address text COLLATE "C",
     last_seen bigint NOT NULL,
     record json NOT NULL
   );
   CREATE INDEX platform_mcp_sessions_seen ON platform_mcp_sessions (last_seen);
   CREATE INDEX platform_mcp_sessions_principal ON platform_mcp_sessions (principal) WHERE principal IS NOT NULL;
   CREATE INDEX platform_mcp_sessions_anonymous ON platform_mcp_sessions (address, last_seen) WHERE principal IS NULL;
   CREATE TABLE platform_mcp_session_subscriptions (
     session_id text COLLATE "C" NOT NULL REFERENCES platform_mcp_sessions (id) ON DELETE CASCADE,
     uri text COLLATE "C" NOT NULL,
     PRIMARY KEY (session_id, uri)
   );`
]

// one lock for every session create on the database: the bounds are counted under it
const CREATE_LOCK = 0x6d63_7073

export interface PostgresSessionRecordsOptions {
  /** The node's one pool (`platform.postgres()`). */
  db: () => Promise<PostgresDb>
}

export class PostgresSessionRecords implements SessionRecords {
  readonly shared = true
  readonly kind = 'postgres'
  private readonly pg: PostgresPool

  constructor(opts: PostgresSessionRecordsOptions) {
    this.pg = new PostgresPool({
      db: opts.db,
      schema: 'mcp-sessions',
      migrations: MIGRATIONS,
      unavailable: (store) => new PlatformError(MCP_ERRORS.MCP_STORE_UNAVAILABLE, { store })
    })
  }

  start(): Promise<void> {
    return this.pg.start()
  }

  stop(): Promise<void> {
    return this.pg.stop()
  }

  available(): boolean {
    return this.pg.available()
  }

  restore(): KeptSession[] {
    return []
  }

  read(): KeptSession | undefined {
    return undefined
  }

  async load(id: string): Promise<KeptSession | undefined> {
    const { rows } = await this.pg.query<{ record: SessionRecord; uris: string[] | null }>(
      `SELECT s.record, (SELECT array_agg(uri ORDER BY uri) FROM platform_mcp_session_subscriptions WHERE session_id = s.id) AS uris
         FROM platform_mcp_sessions s WHERE s.id = $1`,
      [id]
    )
    const r = rows[0]
    return r === undefined ? undefined : { rec: r.record, uris: r.uris ?? [] }
  }

  async admit(rec: SessionRecord, owner: SessionOwner, l: SessionLimits, ttlMs: number): Promise<Admitted> {
    return this.pg.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [CREATE_LOCK])
      // sessions idle past their TTL count for no one, whichever node last held them
      await c.query('DELETE FROM platform_mcp_sessions WHERE last_seen < $1', [rec.lastSeen - ttlMs])
      const bucket = owner.address === undefined ? null : addressBucket(owner.address)
      const { rows } = await c.query<{ own: string; anon: string; total: string }>(
        `SELECT count(*) FILTER (WHERE ($1::text IS NOT NULL AND principal = $1) OR ($1::text IS NULL AND principal IS NULL AND address = $2)) AS own,
                count(*) FILTER (WHERE principal IS NULL) AS anon, count(*) AS total FROM platform_mcp_sessions`,
        [owner.principal, bucket]
      )
      const k = { own: Number(rows[0]!.own), anon: Number(rows[0]!.anon), total: Number(rows[0]!.total) }
      const refusal = (scope: 'server' | 'anonymous' | 'principal' | 'address', of?: string): Admitted => {
        const limit = {
          server: l.max,
          anonymous: Math.max(0, l.max - l.reserve),
          principal: l.perPrincipal,
          address: l.perAddress
        }[scope]
        const key = {
          server: 'platform.mcp.max-sessions',
          principal: 'platform.mcp.sessions.max-per-principal',
          address: 'platform.mcp.sessions.max-per-address',
          anonymous: 'platform.mcp.sessions.authenticated-reserve'
        }[scope]
        return of === undefined ? { scope, limit, key } : { scope, limit, key, of }
      }
      if (owner.principal !== null && k.own >= l.perPrincipal) return refusal('principal', owner.principal)
      if (owner.principal === null && bucket !== null && k.own >= l.perAddress) return refusal('address', bucket)
      const full = k.total >= l.max
      const anonymousFull = owner.principal === null && k.anon >= l.max - l.reserve
      let evicted: string | undefined
      if (full || anonymousFull) {
        // the least recently seen anonymous session makes room: anonymous clients alone cannot lock out everyone else
        const gone = await c.query<{ id: string }>(
          `DELETE FROM platform_mcp_sessions WHERE id = (
             SELECT id FROM platform_mcp_sessions WHERE principal IS NULL ORDER BY last_seen LIMIT 1) RETURNING id`
        )
        evicted = gone.rows[0]?.id
        if (evicted === undefined) return refusal(full ? 'server' : 'anonymous')
      }
      await c.query(
        'INSERT INTO platform_mcp_sessions (id, principal, address, last_seen, record) VALUES ($1, $2, $3, $4, $5)',
        [rec.id, owner.principal, bucket, rec.lastSeen, JSON.stringify(rec)]
      )
      return evicted === undefined ? {} : { evicted }
    })
  }

  async put(rec: SessionRecord): Promise<void> {
    // an update only: a session ended on another node is not brought back by a late write here
    await this.pg.query('UPDATE platform_mcp_sessions SET last_seen = $2, record = $3 WHERE id = $1', [
      rec.id,
      rec.lastSeen,
      JSON.stringify(rec)
    ])
  }

  async remove(id: string): Promise<void> {
    await this.pg.query('DELETE FROM platform_mcp_sessions WHERE id = $1', [id])
  }

  async subscribe(id: string, uri: string): Promise<void> {
    await this.pg.query(
      `INSERT INTO platform_mcp_session_subscriptions (session_id, uri)
       SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM platform_mcp_sessions WHERE id = $1) ON CONFLICT DO NOTHING`,
      [id, uri]
    )
  }

  async unsubscribe(id: string, uri: string): Promise<void> {
    await this.pg.query('DELETE FROM platform_mcp_session_subscriptions WHERE session_id = $1 AND uri = $2', [id, uri])
  }

  async sweep(now: number, ttlMs: number): Promise<void> {
    await this.pg.query('DELETE FROM platform_mcp_sessions WHERE last_seen < $1', [now - ttlMs])
  }
}
