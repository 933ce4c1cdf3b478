export { Store } from './lmdb.js'
export { RingBuffer } from './ring-buffer.js'
