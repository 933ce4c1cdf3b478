import type { SharedPostgres, Schema } from '../store/index.js'
import type { PluginKvStore } from './capabilities.js'

export const PLUGIN_KV_SCHEMA: Schema = {
  name: 'plugin-kv',
  migrations: [
    // `json` keeps a value's text as the plugin wrote it; "C" orders keys by bytes, as LMDB does
    `CREATE TABLE platform_plugin_kv (
       plugin text COLLATE "C" NOT NULL,
       key text COLLATE "C" NOT NULL,
       value json NOT NULL,
       PRIMARY KEY (plugin, key)
     )`
  ]
}

/**
 * Plugins' values in PostgreSQL: every node reads what a plugin put on any node. Each call is one
 * statement; a put replaces the value whole (the last write wins, as in LMDB).
 */
export class PostgresPluginKv implements PluginKvStore {
  constructor(private readonly pg: SharedPostgres) {
    pg.use(PLUGIN_KV_SCHEMA)
  }

  async get(plugin: string, key: string): Promise<unknown> {
    const { rows } = await this.pg.query<{ value: unknown }>(
      PLUGIN_KV_SCHEMA,
      'SELECT value FROM platform_plugin_kv WHERE plugin = $1 AND key = $2',
      [plugin, key]
    )
    return rows.length === 0 ? undefined : rows[0]!.value
  }

  async put(plugin: string, key: string, value: unknown): Promise<void> {
    await this.pg.query(
      PLUGIN_KV_SCHEMA,
      `INSERT INTO platform_plugin_kv (plugin, key, value) VALUES ($1, $2, $3::json)
       ON CONFLICT (plugin, key) DO UPDATE SET value = EXCLUDED.value`,
      [plugin, key, JSON.stringify(value)]
    )
  }

  async delete(plugin: string, key: string): Promise<boolean> {
    const { rowCount } = await this.pg.query(
      PLUGIN_KV_SCHEMA,
      'DELETE FROM platform_plugin_kv WHERE plugin = $1 AND key = $2',
      [plugin, key]
    )
    return (rowCount ?? 0) > 0
  }

  async list(plugin: string, prefix: string, limit: number): Promise<string[]> {
    // the same range as LMDB's (the prefix up to the last code point), found on the index
    const { rows } = await this.pg.query<{ key: string }>(
      PLUGIN_KV_SCHEMA,
      `SELECT key FROM platform_plugin_kv
        WHERE plugin = $1 AND key >= $2 AND key < $3 AND starts_with(key, $2) ORDER BY key LIMIT $4`,
      [plugin, prefix, prefix + '\u{10FFFF}', limit]
    )
    return rows.map((r) => r.key)
  }
}
