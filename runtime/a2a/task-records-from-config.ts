import { storeKindOf } from '../config/index.js'
import type { Platform } from '../platform.js'
import { LocalTaskRecords } from './local-task-records.js'
import { PostgresTaskRecords } from './postgres-task-records.js'
import type { A2aTaskRecords, TaskRecordsOptions } from './task-records.js'

const STORE_KEY = 'platform.a2a.store'

/** The task store `platform.a2a.store` names (`postgres` by default in cluster mode), not started. */
export function taskRecordsFromConfig(platform: Platform, opts: TaskRecordsOptions): A2aTaskRecords {
  const kind = storeKindOf(platform.config, STORE_KEY)
  if (kind === 'memory') return new LocalTaskRecords(opts)
  if (kind === 'lmdb') return new LocalTaskRecords(opts, platform.store.db('a2a-tasks'))
  return new PostgresTaskRecords({ ...opts, db: () => platform.postgres(`${STORE_KEY} is postgres`) })
}
