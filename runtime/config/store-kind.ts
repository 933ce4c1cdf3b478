import type { ConfigKey, ConfigKeys } from './core-keys.js'
import type { Config } from './load.js'

/**
 * The store a shared-state key (`KeyDef.sharedState`) chooses: as the operator set it, else
 * `postgres` in cluster mode (every node must see the same state), else the key's default.
 */
export function storeKindOf<K extends ConfigKey>(config: Config, key: K): ConfigKeys[K] | 'postgres' {
  if (config.origin(key) === undefined && config.get('platform.cluster.enabled')) return 'postgres'
  return config.get(key)
}
