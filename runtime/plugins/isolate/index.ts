export { loadIsolate, DEFAULT_MAX_RESULT_BYTES } from './isolate-tier.js'
