export { Store } from './lmdb.js'
export { RingBuffer } from './ring-buffer.js'
export { type Columns } from './log-page.js'
export { RetainedLog, type LogKey } from './retained-log.js'
export { countAndLogWriteFailures, type WriteFailureReport } from './write-failure.js'
export {
  SplitLog,
  type AnonymousDeniedCounts,
  type AnonymousPartOptions,
  type EntryKind,
  type LogPage,
  type LogPart
} from './split-log.js'
export { SharedPostgres, type Schema } from './shared-postgres.js'
export { PostgresLog } from './postgres-log.js'
export { CorePostgres } from './core-postgres.js'
export { nodeIdentity } from './node-identity.js'
export { InProcessCounters } from './in-process-counters.js'
export { PostgresDb, describeUrl, isUnreachable, textFits, type Sql } from './postgres-db.js'
export { STORE_ERRORS } from './errors.js'
export { openPlatformPostgres } from './platform-postgres.js'
export { postgresReadiness } from './postgres-readiness.js'
export { PostgresPool } from './postgres-pool.js'
export { TaskLeaseKeeper, type LeasedTasks, type TaskLeaseHolder } from './task-lease-keeper.js'
export { anyLeaseExpired, expiredLeasesForUpdate, leaseUntil, renewLeases } from './task-leases-sql.js'
