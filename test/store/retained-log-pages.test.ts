// RetainedLog's pages: the entries appended in one turn of the event loop are one LMDB value. Reads, the
// reload at start-up, the retention trim and durability must see every entry as before.
import t from 'tap'
import { killWriterAfter, lastAcked } from '../helpers/kill-writer.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, RetainedLog, type LogKey } from '../../runtime/store/index.js'
import { entryCount } from '../helpers/entry-count.js'

interface Item {
  n: number
  big?: bigint
}

const dir = mkdtempSync(join(tmpdir(), 'retained-pages-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** Appends `from`..`to - 1` in one synchronous run (one page) and waits for all of them. */
async function batch(log: RetainedLog<Item>, from: number, to: number): Promise<void> {
  const acks: Promise<void>[] = []
  for (let n = from; n < to; n++) acks.push(log.append({ n }))
  await Promise.all(acks)
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i)

t.test('appends in one run share a page; the page is at most 64 entries', async (t) => {
  const store = new Store(join(dir, 'share'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const log = new RetainedLog<Item>({ name: 'share', capacity: 200, db })
  await batch(log, 0, 100)
  t.equal(entryCount(db), 2, '100 entries in two pages')
  t.same(
    [...db.getRange()].map(({ key, value }) => [key[1], (value as unknown as Item[]).length]),
    [
      [0, 64],
      [64, 36]
    ],
    'keyed by the first entry of each page'
  )
  t.same(
    log.stored(100).map((i) => i.n),
    range(0, 100).reverse()
  )
})

t.test(
  'a restart reloads the ring across pages, reads below it start inside a page, the sequence continues',
  async (t) => {
    const path = join(dir, 'restart')
    let store = new Store(path)
    let log = new RetainedLog<Item>({ name: 'restart', capacity: 10, db: store.db<Item, LogKey>('items') })
    for (let b = 0; b < 3; b++) await batch(log, b * 7, b * 7 + 7)
    await store.close()

    store = new Store(path)
    t.teardown(() => store.close())
    const db = store.db<Item, LogKey>('items')
    log = new RetainedLog<Item>({ name: 'restart', capacity: 10, db })
    t.same(
      log.oldestFirst().map((i) => i.n),
      range(11, 21),
      'the newest 10 of pages [0-6] [7-13] [14-20]'
    )
    // the ring's oldest entry (11) sits inside the page [7-13]: 10..7 come from that page
    t.same(
      log.newest(21).map((i) => i.n),
      range(0, 21).reverse()
    )
    t.same(
      log.newest(13).map((i) => i.n),
      range(8, 21).reverse()
    )
    await batch(log, 21, 24)
    const last = [...db.getKeys({ reverse: true, limit: 1 })][0]!
    t.equal(last[1], 21, 'the new page continues after the last stored entry')
    t.same(
      log.stored(30).map((i) => i.n),
      range(0, 24).reverse()
    )
  }
)

t.test('the trim removes whole pages beyond the retention and keeps the newest', async (t) => {
  const store = new Store(join(dir, 'trim'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const log = new RetainedLog<Item>({ name: 'trim', capacity: 10, db, retention: 150 })
  for (let b = 0; b < 40; b++) await batch(log, b * 50, b * 50 + 50)
  await db.committed
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(
    log.stored(1000).map((i) => i.n),
    range(1850, 2000).reverse(),
    'the trim after entry 2000 keeps exactly the newest 150 (whole pages)'
  )
  t.same(
    [...db.getKeys()].map((k) => k[1]),
    range(0, 15).map((i) => 1850 + i * 10),
    'whole pages of 10 (the ring capacity bounds a page) left'
  )
  t.same(
    log.newest(1000).map((i) => i.n),
    range(1850, 2000).reverse()
  )
})

t.test('a trim runs after the page that made it due is committed, in no write transaction of its own', async (t) => {
  const store = new Store(join(dir, 'trim-txn'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  // a transaction of its own would cost a commit and a round trip to LMDB's writer per trim
  let transactions = 0
  const transaction = db.transaction.bind(db)
  db.transaction = ((fn: () => unknown) => {
    transactions++
    return transaction(fn)
  }) as typeof db.transaction
  const log = new RetainedLog<Item>({ name: 'trim-txn', capacity: 10, db, retention: 150 })
  // 1000 entries in one run that never yields: the trim waits for their pages' commit
  const acks: Promise<void>[] = []
  for (let n = 0; n < 1000; n++) acks.push(log.append({ n }))
  t.equal(entryCount(db), 0, 'nothing committed (nor trimmed) within the run')
  await Promise.all(acks)
  // the trim ran as the last page's commit resolved, before its acknowledgements: its removals are queued
  await db.committed
  t.equal(transactions, 0)
  t.same(
    log.stored(2000).map((i) => i.n),
    range(850, 1000).reverse(),
    'the newest 150 kept: the trim saw every page of the run'
  )
})

t.test('an entry the encoder rejects fails its page, is reported once, and the others are kept', async (t) => {
  const store = new Store(join(dir, 'bad'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const reports: unknown[] = []
  const log = new RetainedLog<Item>({ name: 'bad', capacity: 10, db, onWriteFailure: (_, err) => reports.push(err) })
  const acks = [log.append({ n: 1 }), log.append({ n: 2, big: 2n ** 70n }), log.append({ n: 3 })]
  for (const ack of acks) await t.rejects(ack, /too large to fit in MessagePack/)
  t.equal(reports.length, 1)
  await db.committed
  t.same(
    log.stored(10).map((i) => i.n),
    [3, 1],
    'the good entries of the page are stored'
  )
  await batch(log, 4, 6)
  t.same(
    log.stored(10).map((i) => i.n),
    [5, 4, 3, 1]
  )
})

t.test('entries stored one per value (before pages) are read, reloaded and trimmed beside pages', async (t) => {
  const path = join(dir, 'legacy')
  let store = new Store(path)
  let db = store.db<Item, LogKey>('items')
  for (let n = 0; n < 5; n++) await db.put([Date.now(), n], { n })
  await store.close()

  store = new Store(path)
  t.teardown(() => store.close())
  db = store.db<Item, LogKey>('items')
  const log = new RetainedLog<Item>({ name: 'legacy', capacity: 3, db })
  t.same(
    log.oldestFirst().map((i) => i.n),
    [2, 3, 4]
  )
  await batch(log, 5, 8)
  t.same(
    [...db.getKeys()].map((k) => k[1]),
    [0, 1, 2, 3, 4, 5],
    'the page continues the sequence'
  )
  t.same(
    log.newest(10).map((i) => i.n),
    range(0, 8).reverse()
  )
  t.same(
    log.stored(10).map((i) => i.n),
    range(0, 8).reverse()
  )
})

t.test('a shared field is stored once per run of the same object and restored on every read', async (t) => {
  interface Shared {
    n: number
    ctx: { turn: number }
  }
  const path = join(dir, 'shared')
  let store = new Store(path)
  let db = store.db<Shared, LogKey>('items')
  let log = new RetainedLog<Shared>({ name: 'shared', capacity: 3, db, sharedField: 'ctx' })
  const a = { turn: 1 }
  const b = { turn: 2 }
  const entries = [0, 1, 2, 3, 4].map((n) => ({ n, ctx: n < 3 ? a : b }))
  await Promise.all(entries.map((e) => log.append(e)))
  t.ok(
    entries.every((e) => e.ctx === (e.n < 3 ? a : b)),
    'the appended entries keep their field after the write'
  )
  const raw = [...db.getRange()].flatMap(({ value }) => value as unknown as Partial<Shared>[])
  t.same(
    raw.map((e) => e.ctx),
    [a, undefined, undefined, b, undefined],
    'stored once per run (pages of 3: the ring capacity)'
  )
  const expected = entries.map((e) => ({ n: e.n, ctx: { ...e.ctx } })).reverse()
  t.same(log.stored(10), expected)
  t.same(log.newest(10), expected, 'below the ring too')
  await store.close()

  store = new Store(path)
  t.teardown(() => store.close())
  db = store.db<Shared, LogKey>('items')
  log = new RetainedLog<Shared>({ name: 'shared', capacity: 3, db, sharedField: 'ctx' })
  t.same(log.oldestFirst(), expected.slice(0, 3).reverse(), 'the reload restores the field')
  t.same(log.newest(10), expected)
})

// A child appends pages through RetainedLog and reports the newest entry of each acknowledged
// page; the parent kills it with SIGKILL. Every reported entry must be reloaded after the crash.
const child = `
const { Store, RetainedLog } = await import(${JSON.stringify(new URL('../../dist/runtime/store/index.js', import.meta.url).href)})
const store = new Store(process.argv[1])
const log = new RetainedLog({ name: 'crash', capacity: 5, db: store.db('items') })
for (let n = 0; ; ) {
  const acks = []
  for (let i = 0; i < 13; i++) acks.push(log.append({ n: n++, payload: 'x'.repeat(100) }))
  await Promise.all(acks)
  process.stdout.write((n - 1) + '\\n')
}
`

t.test('an acknowledged append survives SIGKILL of the writer', async (t) => {
  const path = mkdtempSync(join(tmpdir(), 'retained-crash-'))
  t.teardown(() => rmSync(path, { recursive: true, force: true }))
  // each line is one page of 13 entries, numbered by its last entry
  const acked = lastAcked(await killWriterAfter(child, path, 100))
  t.ok(acked >= 13 * 100 - 1, `${acked + 1} entries acknowledged before the kill`)
  const store = new Store(path)
  t.teardown(() => store.close())
  const log = new RetainedLog<Item>({ name: 'crash', capacity: 5, db: store.db<Item, LogKey>('items') })
  const all = log.stored(1_000_000).map((i) => i.n)
  t.ok(all.length >= acked + 1, `${all.length} entries reloaded`)
  t.same(all.slice(-acked - 1).reverse(), range(0, acked + 1), 'every acknowledged entry is there, in order')
  t.ok((log.oldestFirst().at(-1)?.n ?? -1) >= acked, 'the ring is reloaded up to the newest')
})

t.test(
  'with flushMs a page takes the entries of several event-loop turns, and written() writes it at once',
  async (t) => {
    const store = new Store(join(dir, 'window'))
    t.teardown(() => store.close())
    const db = store.db<Item, LogKey>('items')
    let puts = 0
    const put = db.put.bind(db)
    db.put = ((...args: Parameters<typeof db.put>) => {
      puts++
      return put(...args)
    }) as typeof db.put
    // a window no test outlasts: only written() can write the page
    const log = new RetainedLog<Item>({ name: 'window', capacity: 100, db, flushMs: 60_000 })
    for (let n = 0; n < 5; n++) {
      void log.append({ n })
      await new Promise(setImmediate)
    }
    await db.committed
    t.equal(puts, 0, 'five event-loop turns later nothing is written')
    t.same(
      log.newest(10).map((i) => i.n),
      [4, 3, 2, 1, 0],
      'every entry reads from memory meanwhile'
    )
    await log.written()
    t.equal(puts, 1, 'written() wrote the five as one page')
    t.same(
      log.stored(10).map((i) => i.n),
      [4, 3, 2, 1, 0],
      'committed before written() resolved'
    )
  }
)

t.test('with flushMs a page that does not fill is written once its window ends, nobody waiting', async (t) => {
  const store = new Store(join(dir, 'window-ends'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const log = new RetainedLog<Item>({ name: 'window-ends', capacity: 100, db, flushMs: 5 })
  for (let n = 0; n < 3; n++) void log.append({ n })
  // bounded: the window is 5 ms, this waits up to 5 s
  for (let i = 0; i < 500 && entryCount(db) === 0; i++) await new Promise((r) => setTimeout(r, 10))
  await db.committed
  t.same(
    log.stored(10).map((i) => i.n),
    [2, 1, 0]
  )
})

t.test('with flushMs full pages wait too, and every entry reads and pages from memory meanwhile', async (t) => {
  const store = new Store(join(dir, 'window-full'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const log = new RetainedLog<Item>({ name: 'window-full', capacity: 10, db, flushMs: 60_000 })
  // pages of 10 (the ring's capacity): three full ones wait beside the five of the fourth
  for (let n = 0; n < 35; n++) void log.append({ n })
  await new Promise(setImmediate)
  await db.committed
  t.equal(entryCount(db), 0, 'nothing written')
  t.same(
    log.newest(100).map((i) => i.n),
    range(0, 35).reverse(),
    'the ring holds 10; the rest read from the waiting pages'
  )
  const paged: number[] = []
  let below: LogKey | undefined
  for (;;) {
    const page = log.keyed(7, below)
    if (page.length === 0) break
    paged.push(...page.map((k) => k.value.n))
    below = page.at(-1)!.key
  }
  t.same(paged, range(0, 35).reverse(), 'paging by key walks every entry once')
  await log.written()
  t.equal(entryCount(db), 4, 'written() wrote the four pages')
  t.same(
    log.stored(100).map((i) => i.n),
    range(0, 35).reverse()
  )
})

t.test('with flushMs what waits unwritten is bounded: past it, the pages are written without waiting', async (t) => {
  const store = new Store(join(dir, 'window-bound'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const log = new RetainedLog<Item>({ name: 'window-bound', capacity: 100, db, flushMs: 60_000 })
  for (let n = 0; n < 10_000; n++) void log.append({ n })
  await new Promise(setImmediate)
  await db.committed
  t.ok(log.stored(20_000).length >= 8_000, 'the held pages were written once they passed the bound')
  t.same(
    log.newest(20_000).map((i) => i.n),
    range(0, 10_000).reverse(),
    'and every entry reads'
  )
  await log.written()
})
