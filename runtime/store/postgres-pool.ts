import { isPlatformError } from '../contracts/index.js'
import { STORE_ERRORS } from './errors.js'
import { PostgresDb, type Sql } from './postgres-db.js'

export interface PostgresPoolOptions {
  url: string
  poolSize: number
  /** The area's schema name and its migrations (one per version, applied in order; append, never edit). */
  schema: string
  migrations: readonly string[]
  /** The error a call fails with while the server is out of reach: the area's own 503 (its protocol's code). */
  unavailable: (server: string) => Error
  onError?: (err: Error) => void
}

/**
 * A store's own pool over the shared `PostgresDb` helper, opened when the store starts: its schema
 * migrated once, and the server out of reach answered with the area's 503, so a JSON-RPC edge
 * (A2A, MCP) answers it with its own code.
 */
export class PostgresPool {
  private db: PostgresDb | undefined

  constructor(private readonly opts: PostgresPoolOptions) {}

  async start(): Promise<void> {
    if (this.db !== undefined) throw new Error(`the postgres store ${this.opts.schema} is started already`)
    const db = await PostgresDb.open({
      url: this.opts.url,
      poolSize: this.opts.poolSize,
      ...(this.opts.onError !== undefined ? { onError: this.opts.onError } : {})
    })
    try {
      await db.migrate(this.opts.schema, this.opts.migrations)
    } catch (e) {
      await db.close()
      throw e
    }
    this.db = db
  }

  async stop(): Promise<void> {
    const db = this.db
    this.db = undefined
    await db?.close()
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
