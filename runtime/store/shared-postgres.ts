/**
 * One `pg` pool for the core's stores of shared state (the control audit log, the decision and
 * commitment logs, plugin key-value storage), opened on first use: a node that keeps them in LMDB
 * never loads the driver. Each store names its schema and its migrations; they are applied once
 * per schema, in one transaction under an advisory lock, so nodes starting together migrate one
 * after the other.
 */
import type { Pool, QueryResult, QueryResultRow } from 'pg'
import { PlatformError } from '../contracts/index.js'
import { CONFIG_ERRORS } from '../config/index.js'
import { STORE_ERRORS } from './errors.js'
import { describeUrl, isUnreachable } from './postgres-db.js'

export interface SharedPostgresOptions {
  url: string
  poolSize: number
  /** An idle connection that broke (server restarted): the pool replaces it; this only reports. */
  onError?: (err: Error) => void
  /** How long a new connection may take before the call fails (default 5 s). */
  connectTimeoutMs?: number
  /** How often the server is probed for `available()` once started (default 2 s). */
  probeMs?: number
}

// one lock id for every platform process: two starting at once migrate one after the other
const MIGRATION_LOCK = 0x706c_6163

export class SharedPostgres {
  private pool: Pool | undefined
  private opening: Promise<Pool> | undefined
  private readonly schemas = new Map<string, Promise<void>>()
  private readonly used: Schema[] = []
  private readonly flushers: (() => Promise<void>)[] = []
  private up = false
  private closed = false
  private probe: NodeJS.Timeout | undefined
  private probing = false

  constructor(private readonly opts: SharedPostgresOptions) {}

  /** The server, without credentials, as messages name it. */
  get where(): string {
    return `PostgreSQL at ${describeUrl(this.opts.url)}`
  }

  /** Whether the last statement reached the server (false before the first). */
  available(): boolean {
    return this.up
  }

  /**
   * Runs one statement once `schema`'s migrations are applied. A server out of reach marks the
   * pool down and fails with a 503 naming the server (without credentials).
   */
  async query<R extends QueryResultRow>(schema: Schema, text: string, params: unknown[] = []): Promise<QueryResult<R>> {
    try {
      const pool = await this.open()
      await this.migrated(pool, schema)
      const r = await pool.query<R>(text, params)
      this.up = true
      return r
    } catch (e) {
      if (!isUnreachable(e)) throw e
      this.up = false
      throw new PlatformError(STORE_ERRORS.STORE_UNAVAILABLE, { store: this.where }, { cause: e })
    }
  }

  /** Names a schema `start()` applies (a store built before the platform starts). */
  use(schema: Schema): void {
    if (!this.used.some((s) => s.name === schema.name)) this.used.push(schema)
  }

  /**
   * Connects and applies the migrations of every schema in use now, so a server out of reach stops
   * start-up (one line naming the key and the server, exit 78) instead of failing the first write.
   */
  async start(): Promise<void> {
    try {
      const pool = await this.open()
      for (const s of this.used) await this.migrated(pool, s)
      this.up = true
      // readiness follows the server even while nothing is written
      this.probe ??= setInterval(() => void this.ping(), this.opts.probeMs ?? 2000).unref()
    } catch (e) {
      if (!isUnreachable(e)) throw e
      const why = (e as { code?: string }).code ?? (e as Error).message
      throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
        detail: `platform.postgres.url: cannot reach ${this.where} (${why}); start it or fix the url`
      })
    }
  }

  /** Runs before the pool closes: a store writes what it holds (a log's buffered entries). */
  onClose(fn: () => Promise<void>): void {
    this.flushers.push(fn)
  }

  async close(): Promise<void> {
    if (this.closed) return
    clearInterval(this.probe)
    await Promise.all(this.flushers.map((fn) => fn().catch(() => {})))
    this.closed = true
    const pool = this.pool ?? (await this.opening?.catch(() => undefined))
    this.pool = undefined
    await pool?.end()
  }

  /** One `SELECT 1`: marks the pool up or down. */
  private async ping(): Promise<void> {
    if (this.probing || this.pool === undefined) return
    this.probing = true
    try {
      await this.pool.query('SELECT 1')
      this.up = true
    } catch (e) {
      if (isUnreachable(e)) this.up = false
    } finally {
      this.probing = false
    }
  }

  private open(): Promise<Pool> {
    if (this.pool !== undefined) return Promise.resolve(this.pool)
    if (this.closed) return Promise.reject(new Error('the shared Postgres pool is closed'))
    this.opening ??= (async () => {
      // imported here: every platform start would otherwise load the driver, most only to use LMDB
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
      this.pool = pool
      return pool
    })()
    return this.opening
  }

  /** Applies a schema's migrations once per pool; a failed attempt is tried again on the next call. */
  private migrated(pool: Pool, schema: Schema): Promise<void> {
    let done = this.schemas.get(schema.name)
    if (done === undefined) {
      done = migrate(pool, schema)
      this.schemas.set(schema.name, done)
      done.catch(() => this.schemas.delete(schema.name))
    }
    return done
  }
}

/** A store's tables: its name and its migrations, applied in order; append one, never edit a shipped one. */
export interface Schema {
  name: string
  migrations: readonly string[]
}

async function migrate(pool: Pool, schema: Schema): Promise<void> {
  const c = await pool.connect()
  try {
    await c.query('BEGIN')
    try {
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
      await c.query(
        `CREATE TABLE IF NOT EXISTS platform_store_schema (
           name text NOT NULL,
           version integer NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (name, version)
         )`
      )
      const { rows } = await c.query<{ v: number | null }>(
        'SELECT max(version) AS v FROM platform_store_schema WHERE name = $1',
        [schema.name]
      )
      const current = rows[0]?.v ?? 0
      if (current > schema.migrations.length)
        throw new Error(
          `the ${schema.name} schema is at version ${current}, newer than this platform knows (${schema.migrations.length}): run the newer platform, or another database`
        )
      for (let v = current + 1; v <= schema.migrations.length; v++) {
        await c.query(schema.migrations[v - 1]!)
        await c.query('INSERT INTO platform_store_schema (name, version) VALUES ($1, $2)', [schema.name, v])
      }
      await c.query('COMMIT')
    } catch (e) {
      await c.query('ROLLBACK').catch(() => {})
      throw e
    }
  } finally {
    c.release()
  }
}
