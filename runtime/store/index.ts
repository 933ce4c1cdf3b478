export { Store, entryCount } from './lmdb.js'
export { RingBuffer } from './ring-buffer.js'
export { entriesOf, type Columns } from './log-page.js'
export {
  RetainedLog,
  countAndLogWriteFailures,
  type LogKey,
  type RetainedLogOptions,
  type WriteFailureReport
} from './retained-log.js'
