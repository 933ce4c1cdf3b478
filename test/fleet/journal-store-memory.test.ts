import t from 'tap'
import { MemoryJournalStore } from '../../runtime/fleet/memory-journal-store.js'
import { runJournalStoreSuite } from './journal-store-suite.js'

runJournalStoreSuite(t, 'memory', async (_t, max) => ({ open: async () => new MemoryJournalStore(max) }))

t.test('memory: the bound must be a positive integer', async (t) => {
  for (const bad of [0, -1, 1.5, NaN])
    t.throws(() => new MemoryJournalStore(bad), { name: 'RangeError', message: 'maxEvents must be a positive integer' })
})
