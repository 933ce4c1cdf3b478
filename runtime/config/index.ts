export {
  loadConfig,
  makeConfig,
  check,
  flatten,
  foldGrantKeys,
  ConfigError,
  type Config,
  type ConfigSources
} from './load.js'
export {
  KEYS,
  PATTERN_KEYS,
  PLUGIN_GRANT_SCHEMA,
  LOG_LEVELS,
  defaults,
  configSchema,
  type KeyDef,
  type ConfigKeys,
  type ConfigKey,
  type ConfigKeyOf,
  type SchemaValue,
  type PluginGrantConfig,
  type PluginGrantKey
} from './schema.js'
export { configTable, BEGIN as CONFIG_BEGIN, END as CONFIG_END } from './docs.js'
export { OperatorError, EX_CONFIG } from './operator-error.js'
export { readRegularFile } from './regular-file.js'
export { editDistance, closest, didYouMean } from './did-you-mean.js'
