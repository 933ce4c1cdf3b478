export { Platform, startPlatform, type PlatformOptions, type ReadinessCheck } from './platform.js'
export { loadConfig, makeConfig, ConfigError, type Config } from './config/index.js'
export { PlatformError } from './http/index.js'
