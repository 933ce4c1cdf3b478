import { CONFIG_ERRORS } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Platform } from '../platform.js'
import { LmdbInteractionStore } from './lmdb-store.js'
import { MemoryInteractionStore } from './memory-store.js'
import { PostgresInteractionStore, describeUrl, isUnreachable } from './postgres-store.js'
import type { InteractionStore } from './types.js'

/**
 * The store `platform.interactions.store` names, not started yet (the area starts it, so a
 * Postgres that cannot be reached fails the start). `postgres` without a url is an operator
 * mistake, refused before anything opens.
 */
export function storeFromConfig(platform: Platform): InteractionStore {
  switch (platform.config.get('platform.interactions.store')) {
    case 'memory':
      return new MemoryInteractionStore()
    case 'postgres': {
      const url = platform.config.get('platform.interactions.postgres.url')
      if (url === undefined)
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail:
            "platform.interactions.postgres.url is required when platform.interactions.store is 'postgres' (e.g. postgres://user:pass@127.0.0.1:5432/platform)"
        })
      return new PostgresInteractionStore({
        url,
        poolSize: platform.config.get('platform.interactions.postgres.pool-size'),
        onError: (err) => platform.logger.warn({ err }, 'interactions: an idle Postgres connection failed')
      })
    }
    default:
      return new LmdbInteractionStore(platform.store)
  }
}

/**
 * Starts the store; a Postgres server that cannot be reached at start-up is an operator error (one
 * line naming the key and the server, without its credentials, exit 78), not a stack trace.
 */
export async function startStore(platform: Platform, store: InteractionStore): Promise<number> {
  try {
    return await store.start()
  } catch (e) {
    if (store.kind !== 'postgres' || !isUnreachable(e)) throw e
    const url = platform.config.get('platform.interactions.postgres.url') ?? ''
    const why = (e as { code?: string }).code ?? (e as Error).message
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `platform.interactions.postgres.url: cannot reach PostgreSQL at ${describeUrl(url)} (${why}); start it or fix the url`
    })
  }
}
