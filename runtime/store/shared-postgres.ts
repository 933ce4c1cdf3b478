/**
 * The core's stores of shared state (the control audit log, the decision and commitment logs,
 * plugin key-value storage) on the node's one PostgreSQL pool (`platform.postgres()`), which the
 * first statement opens: a node that keeps them in LMDB never loads the driver. These stores are
 * built with the platform, before it starts, so each names its schema here (`use`) and `start()`
 * applies the migrations of all of them; a schema named later is migrated by its first statement.
 */
import type { QueryResult, QueryResultRow } from 'pg'
import type { PostgresDb } from './postgres-db.js'

export class SharedPostgres {
  private db: PostgresDb | undefined
  private readonly schemas = new Map<string, Promise<number>>()
  private readonly used: Schema[] = []
  private readonly flushers: (() => Promise<void>)[] = []

  /** `open` gives the node's pool; `where` names the server in messages before it is open. */
  constructor(
    private readonly open: () => Promise<PostgresDb>,
    readonly where: string
  ) {}

  /**
   * Runs one statement once `schema`'s migrations are applied. A server out of reach fails with
   * the 503 the pool answers, naming the server (without credentials).
   */
  async query<R extends QueryResultRow>(schema: Schema, text: string, params: unknown[] = []): Promise<QueryResult<R>> {
    const db = (this.db ??= await this.open())
    await this.migrated(db, schema)
    return db.query<R>(text, params)
  }

  /** Names a schema `start()` applies (a store built before the platform starts). */
  use(schema: Schema): void {
    if (!this.used.some((s) => s.name === schema.name)) this.used.push(schema)
  }

  /** Opens the pool and applies every schema in use, so a server out of reach stops start-up (exit 78). */
  async start(): Promise<void> {
    if (this.used.length === 0) return
    const db = (this.db ??= await this.open())
    for (const s of this.used) await this.migrated(db, s)
  }

  /** Runs before the pool closes: a store writes what it holds (a log's buffered entries). */
  onClose(fn: () => Promise<void>): void {
    this.flushers.push(fn)
  }

  /** Lets every store write what it buffers; the platform closes the pool afterwards. */
  async close(): Promise<void> {
    await Promise.all(this.flushers.map((fn) => fn().catch(() => {})))
  }

  /** Applies a schema's migrations once per node; a failed attempt is tried again on the next call. */
  private migrated(db: PostgresDb, schema: Schema): Promise<number> {
    let done = this.schemas.get(schema.name)
    if (done === undefined) {
      done = db.migrate(schema.name, schema.migrations)
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
