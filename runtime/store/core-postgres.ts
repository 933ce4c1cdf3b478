import { CONFIG_ERRORS, type Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import { SharedPostgres } from './shared-postgres.js'

/**
 * The pool every core store kept in PostgreSQL shares (`platform.postgres.url`,
 * `platform.postgres.pool-size`), made when the first of them asks: a node that keeps them in
 * LMDB makes none. `made` hears of it once: the platform adds its readiness check, degraded (not
 * down) while the server is out of reach, since local work goes on and these stores answer 503.
 */
export class CorePostgres {
  private pool: SharedPostgres | undefined

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly made: (pg: SharedPostgres) => void
  ) {}

  /** The pool, for the store `key` chose PostgreSQL for; a missing url is an operator mistake naming that key. */
  for(key: string): SharedPostgres {
    if (this.pool !== undefined) return this.pool
    const url = this.config.get('platform.postgres.url')
    if (url === undefined)
      throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
        detail: `platform.postgres.url is required when ${key} keeps its state in PostgreSQL (${this.config.origin(key) === undefined ? 'the default in cluster mode' : `${key}: postgres`}), e.g. postgres://user:pass@127.0.0.1:5432/platform`
      })
    const pg = new SharedPostgres({
      url,
      poolSize: this.config.get('platform.postgres.pool-size'),
      onError: (err) => this.logger.warn({ err }, 'an idle Postgres connection of the shared stores failed')
    })
    this.pool = pg
    this.made(pg)
    return pg
  }

  /** Connects, if a store asked: a server out of reach stops start-up (exit 78). */
  async start(): Promise<void> {
    await this.pool?.start()
  }

  /** Once the stores wrote what they buffer. */
  async close(): Promise<void> {
    await this.pool?.close()
  }
}
