export { Platform, startPlatform, type PlatformOptions, type Area } from './platform.js'
export type { ReadinessCheck } from './observability/index.js'
export {
  AreaKey,
  ADMIT_ALL_TOOL_CALLS,
  type ToolCallGate,
  type ToolCallRequest,
  type ToolCallVerdict
} from './contracts/index.js'
export { makeConfig, CONFIG_ERRORS, type Config } from './config/index.js'
export { loadConfig } from './areas.js'
export { PlatformError } from './contracts/index.js'
