/**
 * Where the MCP area keeps its sessions and handed-out tasks: this node's LMDB, or PostgreSQL
 * shared by the nodes (the default in cluster mode, so a session or a task continues on any node).
 */
import { CONFIG_ERRORS } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Platform } from '../platform.js'
import { describeUrl, isUnreachable, postgresReadiness } from '../store/index.js'
import { PostgresSessionRecords } from './postgres-session-records.js'
import { PostgresTasks } from './postgres-tasks.js'
import { LmdbSessionRecords, type SessionRecord, type SessionRecords } from './session-records.js'

type StoreKey = 'platform.mcp.sessions.store' | 'platform.mcp.tasks.store'

/** The key as set, else `postgres` in cluster mode, else its default. */
export function mcpStoreKind(platform: Platform, key: StoreKey): 'lmdb' | 'postgres' {
  const cfg = platform.config
  if (cfg.origin(key) === undefined && cfg.get('platform.cluster.enabled')) return 'postgres'
  return cfg.get(key)
}

/** `platform.postgres.url`, or the operator's mistake of keeping `what` in PostgreSQL without one. */
function postgresUrl(platform: Platform, key: StoreKey, what: string): string {
  const url = platform.config.get('platform.postgres.url')
  if (url !== undefined) return url
  throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
    detail: `platform.postgres.url is required when ${what} are kept in PostgreSQL (${platform.config.get('platform.cluster.enabled') ? 'cluster mode' : `${key}: postgres`}), e.g. postgres://user:pass@127.0.0.1:5432/platform`
  })
}

/** Starts a Postgres-backed store; a server out of reach at start-up is an operator error (one line, exit 78). */
async function started<T extends { start(): Promise<unknown>; stop(): Promise<void>; available(): boolean }>(
  platform: Platform,
  url: string,
  name: string,
  store: T
): Promise<T> {
  try {
    await store.start()
  } catch (e) {
    if (!isUnreachable(e)) throw e
    const why = (e as { code?: string }).code ?? (e as Error).message
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `platform.postgres.url: cannot reach PostgreSQL at ${describeUrl(url)} (${why}); start it or fix the url`
    })
  }
  platform.addReadiness(
    name,
    postgresReadiness(() => store.available(), platform.config.get('platform.cluster.enabled'))
  )
  platform.onClose(() => store.stop())
  return store
}

/** The session store the configuration names, started. */
export async function sessionRecordsFromConfig(platform: Platform): Promise<SessionRecords> {
  const key = 'platform.mcp.sessions.store'
  if (mcpStoreKind(platform, key) === 'lmdb')
    return new LmdbSessionRecords(
      platform.store.db<SessionRecord, string>('mcp-sessions'),
      platform.store.db<1, string>('mcp-session-subscriptions')
    )
  const url = postgresUrl(platform, key, 'MCP sessions')
  const onError = (err: Error): void => platform.logger.warn({ err }, 'mcp: an idle Postgres connection failed')
  return started(
    platform,
    url,
    'mcp-sessions-store',
    new PostgresSessionRecords({ url, poolSize: platform.config.get('platform.postgres.pool-size'), onError })
  )
}

/** The shared task store the configuration names, started; undefined for this node's LMDB. */
export async function tasksStoreFromConfig(platform: Platform): Promise<PostgresTasks | undefined> {
  const key = 'platform.mcp.tasks.store'
  if (mcpStoreKind(platform, key) === 'lmdb') return undefined
  const url = postgresUrl(platform, key, 'MCP tasks')
  const onError = (err: Error): void => platform.logger.warn({ err }, 'mcp: an idle Postgres connection failed')
  const store = new PostgresTasks({
    url,
    poolSize: platform.config.get('platform.postgres.pool-size'),
    node: platform.node.id,
    onError
  })
  return started(platform, url, 'mcp-tasks-store', store)
}
