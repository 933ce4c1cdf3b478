import type { Pool, QueryResult, QueryResultRow } from 'pg'
import { PlatformError } from '../contracts/index.js'
import { STORE_ERRORS } from './errors.js'

/** What a store asks of PostgreSQL: a statement, on the pool or inside a transaction. */
export interface Sql {
  query<R extends QueryResultRow = QueryResultRow>(text: string, params?: unknown[]): Promise<QueryResult<R>>
}

export interface PostgresDbOptions {
  url: string
  /** Connections kept open at most; more statements at once wait for one. */
  poolSize: number
  /** How long a new connection may take before the call fails (default 5 s). */
  connectTimeoutMs?: number
  /** How often the server is probed for `available()` (default 2 s). */
  probeMs?: number
  /** An idle connection that broke (server restarted): the pool replaces it; this only reports. */
  onError?: (err: Error) => void
}

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

/**
 * Whether PostgreSQL's `text` can hold `s`: any string but one with a NUL. A lookup by a key a
 * client sent (a path parameter) that cannot be stored finds nothing, rather than failing.
 */
export function textFits(s: string): boolean {
  return !s.includes('\u0000')
}

// one lock id for every platform process: two starting at once migrate one after the other
const MIGRATION_LOCK = 0x706c_6174

/**
 * One `pg` pool that several stores share. `pg` is imported by `open`, so a node that keeps
 * nothing in PostgreSQL never loads the driver. Every statement goes through `query` or
 * `transaction`: a server out of reach marks the pool down and fails the call with
 * STORE_UNAVAILABLE (503, naming the server without its credentials); an answer marks it up.
 * Each area keeps its schema as a list of migrations applied in order (`migrate`).
 */
export class PostgresDb implements Sql {
  private up = true
  private probing = false
  private closed = false
  private readonly probe: NodeJS.Timeout

  private constructor(
    private readonly pool: Pool,
    private readonly opts: PostgresDbOptions
  ) {
    this.probe = setInterval(() => void this.check(), opts.probeMs ?? 2000).unref()
  }

  /** Opens the pool and checks the server answers; rejects (and opens nothing) when it does not. */
  static async open(opts: PostgresDbOptions): Promise<PostgresDb> {
    const { Pool } = await import('pg')
    const pool = new Pool({
      connectionString: opts.url,
      max: opts.poolSize,
      // a server that does not answer fails the call (503) instead of queueing it for ever
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000
    })
    const db = new PostgresDb(pool, opts)
    pool.on('error', (err) => {
      if (isUnreachable(err)) db.up = false
      opts.onError?.(err)
    })
    try {
      await pool.query('SELECT 1')
    } catch (e) {
      await db.close()
      throw e
    }
    return db
  }

  /** The server as messages name it. */
  get server(): string {
    return `PostgreSQL at ${describeUrl(this.opts.url)}`
  }

  available(): boolean {
    return this.up
  }

  async query<R extends QueryResultRow = QueryResultRow>(
    text: string,
    params: unknown[] = []
  ): Promise<QueryResult<R>> {
    return this.reached(() => this.pool.query<R>(text, params))
  }

  /**
   * Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when
   * it throws (the error passes through).
   */
  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await this.reached(() => this.pool.connect())
    const sql: Sql = {
      query: <R extends QueryResultRow>(text: string, params: unknown[] = []) =>
        this.reached(() => client.query<R>(text, params))
    }
    let broken: unknown
    try {
      await sql.query('BEGIN')
      const out = await fn(sql)
      await sql.query('COMMIT')
      return out
    } catch (e) {
      broken = e
      await client.query('ROLLBACK').catch(() => {})
      throw e
    } finally {
      // a connection that failed mid-transaction is not handed out again
      client.release(broken !== undefined && isUnreachableOrWrapped(broken) ? true : undefined)
    }
  }

  /**
   * Brings `area`'s schema to the last of `migrations` (one entry per version, applied in order
   * and recorded in `platform_schema_versions`), in one transaction that every node starting at
   * once takes in turn. Append a migration; never edit a shipped one. Resolves to the version.
   */
  async migrate(area: string, migrations: readonly string[]): Promise<number> {
    return this.transaction(async (sql) => {
      await sql.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
      await sql.query(
        `CREATE TABLE IF NOT EXISTS platform_schema_versions (
           area text COLLATE "C" NOT NULL,
           version integer NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (area, version)
         )`
      )
      const { rows } = await sql.query<{ v: number | null }>(
        'SELECT max(version) AS v FROM platform_schema_versions WHERE area = $1',
        [area]
      )
      const current = rows[0]?.v ?? 0
      if (current > migrations.length)
        throw new Error(
          `the ${area} schema is at version ${current}, newer than this platform knows (${migrations.length}): run the newer platform, or another database`
        )
      for (let v = current + 1; v <= migrations.length; v++) {
        await sql.query(migrations[v - 1]!)
        await sql.query('INSERT INTO platform_schema_versions (area, version) VALUES ($1, $2)', [area, v])
      }
      return migrations.length
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.probe)
    await this.pool.end()
  }

  /** One `SELECT 1`: readiness follows the server even while no request comes. */
  private async check(): Promise<void> {
    if (this.probing || this.closed) return
    this.probing = true
    try {
      await this.query('SELECT 1')
    } catch {
      /* reached() marked it down */
    } finally {
      this.probing = false
    }
  }

  private async reached<T>(call: () => Promise<T>): Promise<T> {
    if (this.closed) throw new Error(`the pool of ${this.server} is closed`)
    try {
      const out = await call()
      this.up = true
      return out
    } catch (e) {
      if (!isUnreachable(e)) throw e
      this.up = false
      throw new PlatformError(STORE_ERRORS.STORE_UNAVAILABLE, { store: this.server }, { cause: e })
    }
  }
}

function isUnreachableOrWrapped(e: unknown): boolean {
  return isUnreachable(e) || (e instanceof PlatformError && e.code === STORE_ERRORS.STORE_UNAVAILABLE.code)
}
