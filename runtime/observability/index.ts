export { createLogger, type Logger } from './logger.js'
export { Metrics } from './metrics.js'
