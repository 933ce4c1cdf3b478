import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg'

// errno codes and SQLSTATEs (class 08 connection exception, 57P0x shutdown) of a server out of reach
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03'
])

/**
 * True when `e` says the server cannot be reached (refused, reset, shut down, timed out), as
 * opposed to a statement the server refused: the first is a 503 and heals, the second is a bug.
 */
export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code
  if (typeof code === 'string' && (UNREACHABLE.has(code) || code.startsWith('08'))) return true
  const msg = (e as Error).message ?? ''
  return /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
    msg
  )
}

/** The server named without its credentials, for logs and messages (`host:port/database`). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname}${u.port === '' ? '' : `:${u.port}`}${u.pathname}`
  } catch {
    return 'the configured server'
  }
}

export interface PostgresPoolOptions {
  url: string
  poolSize: number
  /**
   * The schema of the store, one entry per version, applied in order at start and recorded under
   * `schema` in `platform_store_schemas`. Append a migration; never edit a shipped one.
   */
  schema: string
  migrations: readonly string[]
  /** The error a call fails with while the server is out of reach (the area's 503). */
  unavailable: (server: string) => Error
  /** An idle connection that broke (server restarted): the pool replaces it; this only reports. */
  onError?: (err: Error) => void
  /** How long a new connection may take before the call fails (default 5 s). */
  connectTimeoutMs?: number
}

// one lock id for every platform process: two starting at once migrate one after the other
const MIGRATION_LOCK = 0x706c_6175

/**
 * A `pg` pool for one of the smaller Postgres-backed stores: the driver loaded only when such a
 * store starts, its schema migrated once at start, and every statement failing with the area's
 * 503 (naming the server without credentials) while the server is out of reach.
 */
export class PostgresPool {
  private pool: Pool | undefined
  private up = false

  constructor(private readonly opts: PostgresPoolOptions) {}

  async start(): Promise<void> {
    if (this.pool !== undefined) throw new Error(`the postgres store ${this.opts.schema} is started already`)
    const { Pool } = await import('pg')
    const pool = new Pool({
      connectionString: this.opts.url,
      max: this.opts.poolSize,
      // a server that does not answer fails the call (503) instead of queueing it for ever
      connectionTimeoutMillis: this.opts.connectTimeoutMs ?? 5000
    })
    pool.on('error', (err) => {
      if (isUnreachable(err)) this.up = false
      this.opts.onError?.(err)
    })
    try {
      await inClient(pool, (c) => this.migrate(c))
    } catch (e) {
      await pool.end()
      throw e
    }
    this.pool = pool
    this.up = true
  }

  async stop(): Promise<void> {
    const pool = this.pool
    this.pool = undefined
    await pool?.end()
  }

  /** Whether the last statement reached the server. */
  available(): boolean {
    return this.up
  }

  async query<R extends QueryResultRow>(text: string, params: unknown[] = []): Promise<QueryResult<R>> {
    const pool = this.started()
    return this.reach(() => pool.query<R>(text, params))
  }

  /** `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  async transaction<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const pool = this.started()
    return this.reach(() =>
      inClient(pool, async (c) => {
        await c.query('BEGIN')
        try {
          const out = await fn(c)
          await c.query('COMMIT')
          return out
        } catch (e) {
          await c.query('ROLLBACK').catch(() => {})
          throw e
        }
      })
    )
  }

  private started(): Pool {
    if (this.pool === undefined) throw new Error(`the postgres store ${this.opts.schema} is not started`)
    return this.pool
  }

  private async reach<T>(op: () => Promise<T>): Promise<T> {
    try {
      const out = await op()
      this.up = true
      return out
    } catch (e) {
      if (!isUnreachable(e)) throw e
      this.up = false
      throw this.opts.unavailable(`PostgreSQL at ${describeUrl(this.opts.url)}`)
    }
  }

  private async migrate(c: PoolClient): Promise<void> {
    const { schema, migrations } = this.opts
    await c.query('BEGIN')
    try {
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
      await c.query(
        `CREATE TABLE IF NOT EXISTS platform_store_schemas (
           name text PRIMARY KEY,
           version integer NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`
      )
      const { rows } = await c.query<{ version: number }>(
        'SELECT version FROM platform_store_schemas WHERE name = $1',
        [schema]
      )
      const current = rows[0]?.version ?? 0
      if (current > migrations.length)
        throw new Error(
          `the ${schema} schema is at version ${current}, newer than this platform knows (${migrations.length}): run the newer platform, or another database`
        )
      for (let v = current + 1; v <= migrations.length; v++) await c.query(migrations[v - 1]!)
      await c.query(
        `INSERT INTO platform_store_schemas (name, version) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, applied_at = now()`,
        [schema, migrations.length]
      )
      await c.query('COMMIT')
    } catch (e) {
      await c.query('ROLLBACK')
      throw e
    }
  }
}

async function inClient<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect()
  try {
    return await fn(c)
  } finally {
    c.release()
  }
}
