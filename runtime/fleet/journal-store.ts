import { storeKindOf } from '../config/index.js'
import type { Platform } from '../platform.js'
import type { JournalStore } from './fleet-types.js'
import { LmdbJournalStore } from './lmdb-journal-store.js'
import { MemoryJournalStore } from './memory-journal-store.js'
import { PostgresJournalStore } from './postgres-journal-store.js'

const STORE_KEY = 'platform.fleet.journal.store'

/**
 * The journal `platform.fleet.journal.store` names (`postgres` by default in cluster mode),
 * started, bounded by `platform.fleet.journal.max-events`.
 */
export async function journalStore(
  platform: Platform
): Promise<JournalStore & { readonly kind: 'memory' | 'lmdb' | 'postgres' }> {
  const max = platform.config.get('platform.fleet.journal.max-events')
  switch (storeKindOf(platform.config, STORE_KEY)) {
    case 'memory':
      return new MemoryJournalStore(max)
    case 'postgres': {
      const store = new PostgresJournalStore(await platform.postgres(`${STORE_KEY} is postgres`), max)
      await store.start()
      return store
    }
    default:
      return new LmdbJournalStore(platform.store, max)
  }
}
