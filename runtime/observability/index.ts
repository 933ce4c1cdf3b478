export { createLogger, type Logger } from './logger.js'
export { Metrics } from './metrics.js'
export { RouteStats } from './route-metrics.js'
export { TimedMetric } from './timed-metric.js'
