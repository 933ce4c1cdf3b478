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
export { nodeIdentity } from './node-identity.js'
export { InProcessCounters } from './in-process-counters.js'
export { PostgresPool, isUnreachable, describeUrl } from './postgres-pool.js'
