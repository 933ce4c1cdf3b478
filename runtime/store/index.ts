export { Store, entryCount } from './lmdb.js'
export { RingBuffer } from './ring-buffer.js'
export { type Columns } from './log-page.js'
export { RetainedLog, countAndLogWriteFailures, type LogKey, type WriteFailureReport } from './retained-log.js'
export {
  SplitLog,
  ANONYMOUS_DENIED_PER_SECOND,
  type AnonymousPartOptions,
  type AnonymousDeniedCounts,
  type EntryKind,
  type LogPage,
  type LogPart
} from './split-log.js'
