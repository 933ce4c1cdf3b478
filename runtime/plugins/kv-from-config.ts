import { storeKindOf, type Config } from '../config/index.js'
import type { CorePostgres, Store } from '../store/index.js'
import { lmdbPluginKv, memoryPluginKv, type KvDatabase, type PluginKvStore } from './capabilities.js'
import { PostgresPluginKv } from './postgres-kv.js'

const KEY = 'platform.plugin-kv.store'

/** Where plugins' values are kept (`platform.plugin-kv.store`, `postgres` by default in cluster mode). */
export function pluginKvFromConfig(config: Config, store: Store, postgres: CorePostgres): PluginKvStore {
  switch (storeKindOf(config, KEY)) {
    case 'postgres':
      return new PostgresPluginKv(postgres.for(KEY))
    case 'memory':
      return memoryPluginKv()
    default:
      // opened on first use: a node whose plugins keep nothing never creates the database
      return lmdbPluginKv(() => store.db<unknown, [string, string]>('plugin-kv') as KvDatabase)
  }
}
