import { CONFIG_ERRORS, type Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import { PostgresDb, describeUrl, isUnreachable } from './postgres-db.js'

/**
 * Opens the pool the stores of shared state share, from `platform.postgres.url` and
 * `platform.postgres.pool-size`. `forWhat` says which store asked (`platform.ai.memory.store is
 * postgres`), so a missing url or a server out of reach at start-up is one line naming the key
 * (exit 78), not a stack trace.
 */
export async function openPlatformPostgres(config: Config, logger: Logger, forWhat: string): Promise<PostgresDb> {
  const url = config.get('platform.postgres.url')
  if (url === undefined)
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `platform.postgres.url is required when ${forWhat}, e.g. postgres://user:pass@127.0.0.1:5432/platform`
    })
  try {
    return await PostgresDb.open({
      url,
      poolSize: config.get('platform.postgres.pool-size'),
      onError: (err) => logger.warn({ err }, 'postgres: an idle connection failed')
    })
  } catch (e) {
    if (!isUnreachable(e)) throw e
    const why = (e as { code?: string }).code ?? (e as Error).message
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `platform.postgres.url: cannot reach PostgreSQL at ${describeUrl(url)} (${why}); start it or fix the url`
    })
  }
}
