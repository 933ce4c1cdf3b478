export { loadWorker } from './worker-tier.js'
