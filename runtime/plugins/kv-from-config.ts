import type { Config } from '../config/index.js'
import { sharedStoreKind, type SharedPostgres } from '../store/index.js'
import { lmdbPluginKv, memoryPluginKv, type KvDatabase, type PluginKvStore } from './capabilities.js'
import { PostgresPluginKv } from './postgres-kv.js'

const KEY = 'platform.plugin-kv.store'

/** Where plugins' values are kept (`platform.plugin-kv.store`, `postgres` by default in cluster mode). */
export function pluginKvFromConfig(
  config: Config,
  lmdb: () => KvDatabase,
  postgres: (key: string) => SharedPostgres
): PluginKvStore {
  switch (sharedStoreKind(config, KEY)) {
    case 'postgres':
      return new PostgresPluginKv(postgres(KEY))
    case 'memory':
      return memoryPluginKv()
    default:
      return lmdbPluginKv(lmdb)
  }
}
