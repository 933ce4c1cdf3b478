import { isPlatformError } from '../contracts/index.js'
import { STORE_ERRORS } from './errors.js'
import type { PostgresDb, Sql } from './postgres-db.js'

export interface PostgresPoolOptions {
  /** The node's one pool (`platform.postgres()`), opened by the first store that asks. */
  db: () => Promise<PostgresDb>
  /** The area's schema name and its migrations (one per version, applied in order; append, never edit). */
  schema: string
  migrations: readonly string[]
  /** The error a call fails with while the server is out of reach: the area's own 503 (its protocol's code). */
  unavailable: (server: string) => Error
}

/**
 * A store's view of the node's one PostgreSQL pool: its schema migrated when the store starts, and
 * the server out of reach answered with the area's 503, so a JSON-RPC edge (A2A, MCP) answers it
 * with its own code. The pool is the platform's, closed by it after every store stopped.
 */
export class PostgresPool {
  private db: PostgresDb | undefined

  constructor(private readonly opts: PostgresPoolOptions) {}

  async start(): Promise<void> {
    if (this.db !== undefined) throw new Error(`the postgres store ${this.opts.schema} is started already`)
    const db = await this.opts.db()
    await db.migrate(this.opts.schema, this.opts.migrations)
    this.db = db
  }

  async stop(): Promise<void> {
    this.db = undefined
  }

  available(): boolean {
    return this.db?.available() ?? false
  }

  query: Sql['query'] = (text, params) => this.area(() => this.started().query(text, params))

  /** `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.area(() => this.started().transaction(fn))
  }

  private started(): PostgresDb {
    if (this.db === undefined) throw new Error(`the postgres store ${this.opts.schema} is not started`)
    return this.db
  }

  private async area<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (e) {
      if (isPlatformError(e, STORE_ERRORS.STORE_UNAVAILABLE)) throw this.opts.unavailable(String(e.params.store))
      throw e
    }
  }
}
