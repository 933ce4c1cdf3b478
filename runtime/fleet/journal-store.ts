import type { Platform } from '../platform.js'
import type { JournalStore } from './fleet-types.js'
import { LmdbJournalStore } from './lmdb-journal-store.js'
import { MemoryJournalStore } from './memory-journal-store.js'

/** The journal `platform.fleet.journal.store` names, bounded by `platform.fleet.journal.max-events`. */
export function journalStore(platform: Platform): JournalStore & { readonly kind: 'memory' | 'lmdb' } {
  const max = platform.config.get('platform.fleet.journal.max-events')
  if (platform.config.get('platform.fleet.journal.store') === 'memory') return new MemoryJournalStore(max)
  return new LmdbJournalStore(platform.store, max)
}
