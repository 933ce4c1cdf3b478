import type { Capabilities } from '../../runtime/plugins/contract.js'
import type { Store } from '../../runtime/store/index.js'

/**
 * The simplest honest kv capability for sandbox tests: one namespace per plugin over the
 * `plugin-kv` LMDB database, keys prefixed `<plugin>\0`. The plugins area builds the real one.
 */
export function kvNamespace(store: Store, plugin: string): NonNullable<Capabilities['kv']> {
  const db = store.db<unknown, string>('plugin-kv')
  const p = `${plugin}\u0000`
  return {
    get: async (key) => db.get(p + key),
    put: async (key, value) => {
      await db.put(p + key, value)
    },
    delete: async (key) => await db.remove(p + key),
    list: async (prefix = '') => {
      const out: string[] = []
      for (const k of db.getKeys({ start: p + prefix, end: p + prefix + '\uffff' })) out.push(String(k).slice(p.length))
      return out
    }
  }
}
