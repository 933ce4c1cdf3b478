export { Store, entryCount } from './lmdb.js'
export { RingBuffer } from './ring-buffer.js'
