export { Store, entryCount } from './lmdb.js'
export { RingBuffer } from './ring-buffer.js'
export { type Columns } from './log-page.js'
export { RetainedLog, countAndLogWriteFailures, type LogKey, type WriteFailureReport } from './retained-log.js'
export {
  SplitLog,
  type AnonymousDeniedCounts,
  type AnonymousPartOptions,
  type EntryKind,
  type LogPage,
  type LogPart
} from './split-log.js'
export { SharedPostgres, isUnreachable, describeUrl, type Schema } from './shared-postgres.js'
export { STORE_ERRORS } from './errors.js'
export { PostgresLog } from './postgres-log.js'
export { sharedStoreKind } from './shared-state.js'
export { CorePostgres } from './core-postgres.js'
export { nodeIdentity } from './node-identity.js'
export { InProcessCounters } from './in-process-counters.js'
