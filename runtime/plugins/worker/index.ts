export { loadWorker } from './worker-tier.js'
export { spinningWait } from './spin-wait.js'
