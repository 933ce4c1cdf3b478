export { loadIsolate, DEFAULT_MAX_RESULT_BYTES } from './isolate-tier.js'
export { DEFAULT_POOL, type IsolatePoolOptions } from './pool.js'
export { LoopWatch } from './loop-watch.js'
