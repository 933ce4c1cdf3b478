// RetainedLog's row pages (`columns`): entries stored as rows of their values with repeats left
// out, read back whole beside the older page shapes; a page spans one turn of the event loop and
// the store's close writes the last one.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, RetainedLog, entryCount, type Columns, type LogKey } from '../../runtime/store/index.js'

interface Row {
  at: string
  name: string
  n: number
  ctx: { turn: number }
  note?: string
}
const NAMES = ['at', 'name', 'n', 'ctx'] as const
const COLUMNS: Columns<Row> = {
  names: NAMES,
  row: (e) => [e.at, e.name, e.n, e.ctx],
  entry: (v) => ({ at: v[0] as string, name: v[1] as string, n: v[2] as number, ctx: v[3] as Row['ctx'] })
}

const dir = mkdtempSync(join(tmpdir(), 'retained-rows-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})

const a = { turn: 1 }
const b = { turn: 2 }
/** Six entries as two turns of three evaluations would log them: time, context shared per turn. */
const six = (): Row[] =>
  [0, 1, 2, 3, 4, 5].map((n) => ({ at: n < 3 ? 'T1' : 'T2', name: `p${n % 3}`, n, ctx: n < 3 ? a : b }))
const plain = (rows: Row[]): Row[] => rows.map((r) => ({ ...r, ctx: { ...r.ctx } }))

t.test('rows: repeated values are left out on disk, every read gives the entries back whole', async (t) => {
  const path = join(dir, 'rows')
  let store = new Store(path)
  let db = store.db<Row, LogKey>('items')
  let log = new RetainedLog<Row>({ name: 'rows', capacity: 4, db, columns: COLUMNS })
  const entries = six()
  await Promise.all(entries.map((e) => log.append(e)))
  t.same(entries, plain(six()), 'the appended entries are untouched')
  const raw = [...db.getRange()].map(({ value }) => value as unknown)
  t.same(
    raw,
    [
      [NAMES, ['T1', 'p0', 0, a], [undefined, 'p1', 1], [undefined, 'p2', 2], ['T2', 'p0', 3, b]],
      [NAMES, ['T2', 'p1', 4, b], [undefined, 'p2', 5]]
    ],
    'two pages (the ring capacity bounds a page), each starting with its columns; repeats ending a row are not written'
  )
  const expected = plain(six()).reverse()
  t.same(log.stored(10), expected)
  t.same(log.newest(10), expected, 'below the ring too')
  await store.close()

  store = new Store(path)
  t.teardown(() => store.close())
  db = store.db<Row, LogKey>('items')
  log = new RetainedLog<Row>({ name: 'rows', capacity: 4, db, columns: COLUMNS })
  t.same(log.oldestFirst(), expected.slice(0, 4).reverse(), 'the reload restores every value')
  t.same(log.newest(10), expected)
})

t.test('pages of the older shapes read beside row pages in the same database', async (t) => {
  const path = join(dir, 'mixed')
  let store = new Store(path)
  let db = store.db<Row, LogKey>('items')
  await db.put([Date.now(), 0], { at: 'T0', name: 'legacy', n: 0, ctx: a })
  let log = new RetainedLog<Row>({ name: 'mixed', capacity: 10, db, sharedField: 'ctx' })
  await Promise.all([1, 2].map((n) => log.append({ at: 'T0', name: 'objects', n, ctx: a })))
  await store.close()

  store = new Store(path)
  t.teardown(() => store.close())
  db = store.db<Row, LogKey>('items')
  log = new RetainedLog<Row>({ name: 'mixed', capacity: 10, db, sharedField: 'ctx', columns: COLUMNS })
  await Promise.all([3, 4].map((n) => log.append({ at: 'T1', name: 'rows', n, ctx: b })))
  t.same(
    [...db.getRange()].map(({ key, value }) => [key[1], Array.isArray(value) ? 'page' : 'entry']),
    [
      [0, 'entry'],
      [1, 'page'],
      [3, 'page']
    ]
  )
  t.same(
    log.stored(10).map((e) => [e.name, e.n, e.ctx.turn]),
    [
      ['rows', 4, 2],
      ['rows', 3, 2],
      ['objects', 2, 1],
      ['objects', 1, 1],
      ['legacy', 0, 1]
    ]
  )
})

t.test(
  'an entry without a value for a column keeps its page as objects; a field beyond the columns is not stored',
  async (t) => {
    const store = new Store(join(dir, 'fallback'))
    t.teardown(() => store.close())
    const db = store.db<Row, LogKey>('items')
    const log = new RetainedLog<Row>({ name: 'fallback', capacity: 10, db, columns: COLUMNS })
    const holed = { at: 'T1', name: 'p', n: 1 } as unknown as Row
    await Promise.all([log.append({ at: 'T1', name: 'p', n: 0, ctx: a }), log.append(holed)])
    t.same(
      log.stored(10).map((e) => [e.n, e.ctx]),
      [
        [1, undefined],
        [0, a]
      ],
      'the missing value stays missing instead of taking the previous row'
    )
    await log.append({ at: 'T2', name: 'p', n: 2, ctx: b, note: 'not a column' })
    t.same(log.stored(1), [{ at: 'T2', name: 'p', n: 2, ctx: b }])
    t.equal(entryCount(db), 2)
  }
)

t.test('appends of one event-loop turn share a page across awaits; the next turn starts another', async (t) => {
  const store = new Store(join(dir, 'turn'))
  t.teardown(() => store.close())
  const db = store.db<Row, LogKey>('items')
  const log = new RetainedLog<Row>({ name: 'turn', capacity: 100, db, columns: COLUMNS })
  const acks: Promise<void>[] = []
  // a turn's pre-admission and post-response phases, with its awaits between them
  for (let n = 0; n < 3; n++) acks.push(log.append({ at: 'T1', name: 'pre', n, ctx: a }))
  await Promise.resolve()
  await Promise.resolve()
  for (let n = 3; n < 6; n++) acks.push(log.append({ at: 'T1', name: 'post', n, ctx: b }))
  await Promise.all(acks)
  t.equal(entryCount(db), 1, 'both phases in one page')
  await new Promise((resolve) => setImmediate(resolve))
  await log.append({ at: 'T2', name: 'pre', n: 6, ctx: a })
  t.equal(entryCount(db), 2)
  t.same(
    log.stored(10).map((e) => e.n),
    [6, 5, 4, 3, 2, 1, 0]
  )
})

t.test('closing the store writes the page of the current turn', async (t) => {
  const path = join(dir, 'close')
  let store = new Store(path)
  const log = new RetainedLog<Row>({
    name: 'close',
    capacity: 10,
    db: store.db<Row, LogKey>('items'),
    columns: COLUMNS
  })
  void log.append({ at: 'T1', name: 'last', n: 1, ctx: a })
  await store.close()
  store = new Store(path)
  t.teardown(() => store.close())
  const again = new RetainedLog<Row>({
    name: 'close',
    capacity: 10,
    db: store.db<Row, LogKey>('items'),
    columns: COLUMNS
  })
  t.same(again.oldestFirst(), [{ at: 'T1', name: 'last', n: 1, ctx: a }])
})

t.test('rows written under other columns read by the names their page carries', async (t) => {
  const path = join(dir, 'renamed')
  let store = new Store(path)
  const reordered: Columns<Row> = {
    names: ['n', 'name', 'ctx', 'at'],
    row: (e) => [e.n, e.name, e.ctx, e.at],
    entry: (v) => ({ n: v[0] as number, name: v[1] as string, ctx: v[2] as Row['ctx'], at: v[3] as string })
  }
  let log = new RetainedLog<Row>({
    name: 'renamed',
    capacity: 10,
    db: store.db<Row, LogKey>('items'),
    columns: reordered
  })
  await Promise.all(six().map((e) => log.append(e)))
  await store.close()
  store = new Store(path)
  t.teardown(() => store.close())
  log = new RetainedLog<Row>({ name: 'renamed', capacity: 10, db: store.db<Row, LogKey>('items'), columns: COLUMNS })
  t.same(log.stored(10), plain(six()).reverse())
})

t.test('a page of rows holds up to 256 entries (rows are a fraction of the bytes of objects)', async (t) => {
  const store = new Store(join(dir, 'big'))
  t.teardown(() => store.close())
  const db = store.db<Row, LogKey>('items')
  const log = new RetainedLog<Row>({ name: 'big', capacity: 1000, db, columns: COLUMNS })
  const acks: Promise<void>[] = []
  for (let n = 0; n < 300; n++) acks.push(log.append({ at: 'T1', name: `p${n % 13}`, n, ctx: a }))
  await Promise.all(acks)
  t.same(
    [...db.getRange()].map(({ key, value }) => [key[1], (value as unknown as unknown[]).length - 1]),
    [
      [0, 256],
      [256, 44]
    ]
  )
  t.equal(log.stored(1000).length, 300)
})
