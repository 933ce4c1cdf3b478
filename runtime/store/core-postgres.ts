import { CONFIG_ERRORS, type Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import { describeUrl, type PostgresDb } from './postgres-db.js'
import { SharedPostgres } from './shared-postgres.js'

/**
 * What the core's stores kept in PostgreSQL share: the node's one pool, through `open` (the
 * platform's `postgres()`), asked for when the first of them is built, so a missing url is an
 * operator mistake at construction, naming the key that chose PostgreSQL.
 */
export class CorePostgres {
  private shared: SharedPostgres | undefined

  constructor(
    private readonly config: Config,
    private readonly open: (forWhat: string) => Promise<PostgresDb>
  ) {}

  /** The shared stores' view of the pool, for the store `key` chose PostgreSQL for. */
  for(key: string): SharedPostgres {
    if (this.shared !== undefined) return this.shared
    const url = this.config.get('platform.postgres.url')
    const why = this.config.origin(key) === undefined ? 'the default in cluster mode' : `${key}: postgres`
    if (url === undefined)
      throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
        detail: `platform.postgres.url is required when ${key} keeps its state in PostgreSQL (${why}), e.g. postgres://user:pass@127.0.0.1:5432/platform`
      })
    this.shared = new SharedPostgres(() => this.open(`${key} is postgres`), `PostgreSQL at ${describeUrl(url)}`)
    return this.shared
  }

  /** Applies the schemas of the stores built so far; a server out of reach stops start-up (exit 78). */
  async start(): Promise<void> {
    await this.shared?.start()
  }

  /** Lets the stores write what they buffer, before the platform closes the pool. */
  async close(): Promise<void> {
    await this.shared?.close()
  }
}
