// SplitLog: a retained log whose anonymous entries live apart, so they never push a known caller's
// entry out; denied anonymous ones counted and sampled; pages by cursor through everything retained,
// in memory and in LMDB (across the ring's edge and a restart) alike.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, type LogKey } from '../../runtime/store/index.js'
import { SplitLog, type EntryKind } from '../../runtime/store/split-log.js'

interface Item {
  n: number
  kind: EntryKind
}

const dir = mkdtempSync(join(tmpdir(), 'split-log-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** Every entry along the cursors, `limit` a page. */
function walk(log: SplitLog<Item>, limit: number, part?: 'main' | 'anonymous'): number[] {
  const out: number[] = []
  let cursor: string | undefined
  for (;;) {
    const page = log.page(limit, cursor, part)!
    out.push(...page.entries.map((e) => e.n))
    if (page.nextCursor === undefined) return out
    cursor = page.nextCursor
  }
}

const kindOf = (e: Item): EntryKind => e.kind

t.test('memory: anonymous entries never evict known ones; denied ones counted and sampled', async (t) => {
  const seen: boolean[] = []
  const log = new SplitLog<Item>(
    { name: 'mem', capacity: 5 },
    { kindOf, keptPerSecond: 3, onDenied: (kept) => seen.push(kept) }
  )
  await log.append({ n: 0, kind: 'kept' })
  await log.append({ n: 1, kind: 'kept' })
  // within one second: a flood cannot take it past its first three
  for (let n = 2; n < 100; n++) await log.append({ n, kind: n % 2 === 0 ? 'anonymous' : 'anonymous-denied' })
  t.same(walk(log, 10, 'main'), [1, 0], 'the known entries stay')
  const { counted, dropped } = log.anonymousDenied
  t.equal(counted, 49)
  t.equal(seen.length, 49)
  t.equal(seen.filter((k) => k).length, counted - dropped)
  t.ok(counted - dropped >= 3 && dropped > 0, 'a sample is kept, the rest dropped')
  t.same(walk(log, 3, 'anonymous').length, 5, 'the anonymous part holds its own capacity')
  t.same(
    walk(log, 2),
    log.newest(100).map((e) => e.n),
    'pages of 2 read what one page reads'
  )
})

t.test('a page of a walk never holds what was appended after the walk began', async (t) => {
  const log = new SplitLog<Item>({ name: 'moving', capacity: 50 }, { kindOf })
  for (let n = 0; n < 10; n++) await log.append({ n, kind: n % 3 === 0 ? 'anonymous' : 'kept' })
  const first = log.page(4)!
  for (let n = 10; n < 20; n++) await log.append({ n, kind: n % 3 === 0 ? 'anonymous' : 'kept' })
  const rest: number[] = []
  let cursor = first.nextCursor
  while (cursor !== undefined) {
    const page = log.page(4, cursor)!
    rest.push(...page.entries.map((e) => e.n))
    cursor = page.nextCursor
  }
  t.same(
    [...first.entries.map((e) => e.n), ...rest].sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
  )
})

t.test('LMDB: paging continues below the ring, and after a restart', async (t) => {
  const path = join(dir, 'lmdb')
  let store = new Store(path)
  const open = (s: Store) =>
    new SplitLog<Item>(
      { name: 'disk', capacity: 4, db: s.db<Item, LogKey>('main') },
      { kindOf, db: s.db<Item, LogKey>('anon'), keptPerSecond: 1000 }
    )
  let log = open(store)
  for (let n = 0; n < 40; n++) await log.append({ n, kind: n % 4 === 0 ? 'kept' : 'anonymous' })
  await log.written()
  const expected = Array.from({ length: 40 }, (_, i) => 39 - i)
  // entries of one millisecond may interleave across the parts either way: each part keeps its order
  const byN = (a: number, b: number): number => b - a
  t.same(walk(log, 3).sort(byN), expected, 'every entry once, from both parts')
  t.same(
    walk(log, 2, 'anonymous'),
    expected.filter((n) => n % 4 !== 0)
  )
  t.same(
    walk(log, 7, 'main'),
    expected.filter((n) => n % 4 === 0)
  )
  await store.close()
  store = new Store(path)
  t.teardown(() => store.close())
  log = open(store)
  t.same(walk(log, 5).sort(byN), expected, 'the same walk after a restart')
  t.equal(log.page(5, 'bad-cursor'), undefined, 'a cursor it did not write')
  const other = log.page(5, undefined, 'main')!.nextCursor!
  t.equal(log.page(5, other), undefined, "another part's cursor")
})
