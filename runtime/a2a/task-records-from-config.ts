import { CONFIG_ERRORS } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Platform } from '../platform.js'
import { describeUrl, isUnreachable } from '../store/index.js'
import { LocalTaskRecords } from './local-task-records.js'
import { PostgresTaskRecords } from './postgres-task-records.js'
import type { A2aTaskRecords, TaskRecordsOptions } from './task-records.js'

const STORE_KEY = 'platform.a2a.store'

/** `platform.a2a.store` as set, else `postgres` in cluster mode (every node must see every task), else its default. */
export function taskStoreKind(platform: Platform): 'memory' | 'lmdb' | 'postgres' {
  const cfg = platform.config
  if (cfg.origin(STORE_KEY) === undefined && cfg.get('platform.cluster.enabled')) return 'postgres'
  return cfg.get(STORE_KEY)
}

/** The task store `platform.a2a.store` names, not started; `postgres` without a url is refused before opening. */
export function taskRecordsFromConfig(platform: Platform, opts: TaskRecordsOptions): A2aTaskRecords {
  const kind = taskStoreKind(platform)
  if (kind === 'memory') return new LocalTaskRecords(opts)
  if (kind === 'lmdb') return new LocalTaskRecords(opts, platform.store.db('a2a-tasks'))
  const url = platform.config.get('platform.postgres.url')
  if (url === undefined)
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `platform.postgres.url is required when A2A tasks are kept in PostgreSQL (${platform.config.get('platform.cluster.enabled') ? 'cluster mode' : `${STORE_KEY}: postgres`}), e.g. postgres://user:pass@127.0.0.1:5432/platform`
    })
  return new PostgresTaskRecords({
    ...opts,
    url,
    poolSize: platform.config.get('platform.postgres.pool-size'),
    onError: (err) => platform.logger.warn({ err }, 'a2a: an idle Postgres connection failed')
  })
}

/** A Postgres server out of reach at start-up is an operator error (one line naming key and server, exit 78). */
export async function startOrExplain(
  platform: Platform,
  records: A2aTaskRecords,
  start: () => Promise<number>
): Promise<number> {
  try {
    return await start()
  } catch (e) {
    if (records.kind !== 'postgres' || !isUnreachable(e)) throw e
    const why = (e as { code?: string }).code ?? (e as Error).message
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `platform.postgres.url: cannot reach PostgreSQL at ${describeUrl(platform.config.get('platform.postgres.url') ?? '')} (${why}); start it or fix the url`
    })
  }
}
