import { CONFIG_ERRORS } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Platform } from '../platform.js'
import { LmdbInteractionStore } from './lmdb-store.js'
import { MemoryInteractionStore } from './memory-store.js'
import { describeUrl, isUnreachable } from '../store/index.js'
import { PostgresInteractionStore } from './postgres-store.js'
import type { InteractionStore } from './types.js'

const STORE_KEY = 'platform.interactions.store'

/**
 * The store kind in force: `platform.interactions.store` as set, else `postgres` in cluster mode
 * (every node must see every interaction), else its default.
 */
export function storeKind(platform: Platform): 'memory' | 'lmdb' | 'postgres' {
  const cfg = platform.config
  if (cfg.origin(STORE_KEY) === undefined && cfg.get('platform.cluster.enabled')) return 'postgres'
  return cfg.get(STORE_KEY)
}

/** The Postgres url and the key it came from: the interactions' own, else the platform's. */
function postgresUrl(platform: Platform): { url: string; key: string } | undefined {
  for (const key of ['platform.interactions.postgres.url', 'platform.postgres.url'] as const) {
    const url = platform.config.get(key)
    if (url !== undefined) return { url, key }
  }
  return undefined
}

/**
 * The store `platform.interactions.store` names, not started yet (the area starts it, so a
 * Postgres that cannot be reached fails the start). `postgres` without a url is an operator
 * mistake, refused before anything opens. Every store records this node as the owner of the runs
 * it saves.
 */
export function storeFromConfig(platform: Platform): InteractionStore {
  const node = platform.node.id
  switch (storeKind(platform)) {
    case 'memory':
      return new MemoryInteractionStore({ node })
    case 'postgres': {
      const pg = postgresUrl(platform)
      if (pg === undefined)
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail: `platform.postgres.url (or platform.interactions.postgres.url) is required when interactions are kept in PostgreSQL (${platform.config.get('platform.cluster.enabled') ? 'cluster mode' : `${STORE_KEY}: postgres`}), e.g. postgres://user:pass@127.0.0.1:5432/platform`
        })
      const cfg = platform.config
      const poolKey = 'platform.interactions.postgres.pool-size'
      return new PostgresInteractionStore({
        url: pg.url,
        node,
        poolSize: cfg.origin(poolKey) !== undefined ? cfg.get(poolKey) : cfg.get('platform.postgres.pool-size'),
        leaseMs: cfg.get('platform.cluster.lease-ms'),
        onError: (err) => platform.logger.warn({ err }, 'interactions: an idle Postgres connection failed')
      })
    }
    default:
      return new LmdbInteractionStore(platform.store, {
        node,
        packEnded: platform.config.get('platform.interactions.lmdb.pack-ended'),
        groupCommitMs: platform.config.get('platform.interactions.lmdb.group-commit-ms'),
        onError: (err) =>
          platform.logger.warn(
            { err },
            'interactions: packing ended runs failed; they are read from their steps and packed after a restart'
          )
      })
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
    const pg = postgresUrl(platform)
    const why = (e as { code?: string }).code ?? (e as Error).message
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `${pg?.key ?? 'platform.postgres.url'}: cannot reach PostgreSQL at ${describeUrl(pg?.url ?? '')} (${why}); start it or fix the url`
    })
  }
}
