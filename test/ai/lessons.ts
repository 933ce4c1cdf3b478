import type { TestPlatform } from '../helpers/platform.js'

/** Resolves once the memory sink's database holds `n` lessons (polled; the writes are not awaited by turns). */
export async function lessonsStored(tp: TestPlatform, n: number): Promise<void> {
  const db = tp.platform.store.db('governance-memory')
  const until = Date.now() + 5000
  while ([...db.getKeys()].length < n) {
    if (Date.now() > until) throw new Error(`the memory sink never stored ${n} lessons`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
