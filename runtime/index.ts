export { Platform, startPlatform, ADMIT_ALL_TOOL_CALLS, type PlatformOptions, type ReadinessCheck, type ToolCallGate, type ToolCallRequest, type ToolCallVerdict } from './platform.js'
export { loadConfig, makeConfig, ConfigError, type Config } from './config/index.js'
export { PlatformError } from './http/index.js'
