import type { Config, ConfigKeys } from '../config/index.js'

/** Where a store of shared state keeps it. */
export type SharedStoreKind = 'memory' | 'lmdb' | 'postgres'

/**
 * The store a `sharedState` key chooses: as set, else `postgres` in cluster mode (every node must
 * see the state; setting `lmdb` or `memory` there is refused at load), else the key's default.
 */
export function sharedStoreKind(config: Config, key: keyof ConfigKeys): SharedStoreKind {
  if (config.origin(key) === undefined && config.get('platform.cluster.enabled')) return 'postgres'
  return config.get(key) as SharedStoreKind
}
