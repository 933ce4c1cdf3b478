// RetainedLog's pages of columns (`columns`): entries stored packed (each distinct value of a page
// once, the entries as slots of it), or as rows of their values with repeats left out when the
// packing cannot hold a page; read back whole beside the older page shapes; a page spans one turn
// of the event loop and the store's close writes the last one.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, RetainedLog, type Columns, type LogKey } from '../../runtime/store/index.js'
import { entryCount } from '../helpers/entry-count.js'
import { entryCountOf } from '../../runtime/store/log-page.js'
import { PACKED, PagePacker, fromPacked } from '../../runtime/store/packed-page.js'

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

t.test('packed: each distinct value of a page stored once, every read gives the entries back whole', async (t) => {
  const path = join(dir, 'rows')
  let store = new Store(path)
  let db = store.db<Row, LogKey>('items')
  let log = new RetainedLog<Row>({ name: 'rows', capacity: 4, db, columns: COLUMNS })
  const entries = six()
  await Promise.all(entries.map((e) => log.append(e)))
  t.same(entries, plain(six()), 'the appended entries are untouched')
  const raw = [...db.getRange()].map(({ value }) => {
    const v = value as unknown as unknown[]
    const table = (v[3] as unknown[]).map((s) =>
      Array.isArray(s) ? ['record', ...[...(s[0] as string)].map((c) => c.charCodeAt(0))] : s
    )
    return [v[0], v[1], v[2], table, v[4], [...(v[5] as Uint8Array)]]
  })
  t.same(
    raw,
    [
      [
        PACKED,
        NAMES,
        4,
        // a flat object is a record of its keys' and values' slots: `turn` and 1, `turn` and 2
        ['T1', 'p0', 0, ['record', 4, 5], 'turn', 1, 'p1', 'p2', 2, 'T2', 3, ['record', 4, 8]],
        [-1, -1, -1, -1],
        [...[0, 0, 0, 9], ...[1, 6, 7, 1], ...[2, 5, 8, 10], ...[3, 3, 3, 11]]
      ],
      // a column every entry of the page shares is one slot, not a slot per entry
      [PACKED, NAMES, 2, ['T2', 'p1', 4, ['record', 4, 5], 'turn', 2, 'p2', 5], [0, -1, -1, 3], [1, 6, 2, 7]]
    ],
    'two pages (the ring capacity bounds a page): the table of distinct values, then the slots of the columns that vary'
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

/** A log of columns whose window no test outlasts (only written() writes), its failures in `reports`. */
function windowed(t: Test, name: string, capacity: number) {
  const store = new Store(join(dir, name))
  t.teardown(() => store.close())
  const db = store.db<Row, LogKey>('items')
  const reports: unknown[] = []
  const log = new RetainedLog<Row>({
    name,
    capacity,
    db,
    columns: COLUMNS,
    flushMs: 60_000,
    onWriteFailure: (_, err) => reports.push(err)
  })
  return { db, log, reports }
}

t.test(
  'with flushMs full pages wait packed, read and page the same meanwhile, and written() writes them',
  async (t) => {
    const { db, log, reports } = windowed(t, 'held', 4)
    const all: Row[] = Array.from({ length: 14 }, (_, n) => ({
      at: `T${n >> 2}`,
      name: `p${n % 3}`,
      n,
      ctx: n % 2 === 0 ? a : b
    }))
    // one value msgpack cannot encode, in the second page: only that entry is lost at the write
    const bad = { ...all[5]!, n: (2n ** 70n) as unknown as number }
    const acks = all.map((e, n) => log.append(n === 5 ? bad : e))
    await new Promise(setImmediate)
    await db.committed
    t.equal(entryCount(db), 0, 'nothing written')
    const held = (log as unknown as { held: { packed?: unknown }[] }).held
    t.ok(
      held.length === 3 && held.every((p) => p.packed !== undefined),
      'the three full pages wait as their packed value'
    )
    const expected = plain(all.map((e, n) => (n === 5 ? bad : e))).reverse()
    t.same(log.newest(100), expected, 'every entry reads whole: the ring holds 4, the rest come from the waiting pages')
    const paged: Row[] = []
    let below: LogKey | undefined
    for (let page = log.keyed(3); page.length > 0; page = log.keyed(3, below)) {
      paged.push(...page.map((k) => k.value))
      below = page.at(-1)!.key
    }
    t.same(paged, expected, 'paging by key walks every entry once')
    await log.written()
    const settled = await Promise.allSettled(acks)
    t.same(
      settled.map((s) => s.status),
      all.map((_, n) => (n >= 4 && n < 8 ? 'rejected' : 'fulfilled')),
      "the bad entry's page rejects its appends, the others resolve"
    )
    t.equal(reports.length, 1, 'reported once')
    t.same(
      log.stored(100).map((e) => e.n),
      all
        .map((e) => e.n)
        .filter((n) => n !== 5)
        .reverse(),
      'every other entry is on disk'
    )
  }
)

t.test('with flushMs an entry whose field throws when read fails only itself, never the append', async (t) => {
  const { log, reports } = windowed(t, 'held-throws', 2)
  const bad = {
    name: 'p1',
    n: 2,
    ctx: a,
    get at(): string {
      throw new Error('unreadable')
    }
  }
  const acks: Promise<void>[] = []
  t.doesNotThrow(() => {
    for (const e of [{ at: 'T1', name: 'p0', n: 1, ctx: a }, bad, { at: 'T1', name: 'p2', n: 3, ctx: a }])
      acks.push(log.append(e))
  }, 'the full page holding it is sealed without a throw')
  await log.written()
  const settled = await Promise.allSettled(acks)
  t.same(
    settled.map((s) => s.status),
    ['rejected', 'rejected', 'fulfilled']
  )
  t.equal(reports.length, 1, 'reported once')
  t.same(
    log.stored(10).map((e) => e.n),
    [3, 1]
  )
})

t.test('a page of columns holds up to 256 entries (a fraction of the bytes of objects)', async (t) => {
  const store = new Store(join(dir, 'big'))
  t.teardown(() => store.close())
  const db = store.db<Row, LogKey>('items')
  const log = new RetainedLog<Row>({ name: 'big', capacity: 1000, db, columns: COLUMNS })
  const acks: Promise<void>[] = []
  for (let n = 0; n < 300; n++) acks.push(log.append({ at: 'T1', name: `p${n % 13}`, n, ctx: a }))
  await Promise.all(acks)
  t.same(
    [...db.getRange()].map(({ key, value }) => [key[1], entryCountOf(value)]),
    [
      [0, 256],
      [256, 44]
    ]
  )
  t.equal(log.stored(1000).length, 300)
})

t.test('a burst of packed entries sizes its pages by their bytes, never past the ring', async (t) => {
  const store = new Store(join(dir, 'grow'))
  t.teardown(() => store.close())
  /** The first sequence of each page written for 3 000 entries appended in one event-loop turn. */
  const pages = async (name: string, capacity: number, entry: (i: number) => Row): Promise<number[]> => {
    const db = store.db<Row, LogKey>(name)
    const log = new RetainedLog<Row>({ name, capacity, db, columns: COLUMNS })
    const all = Array.from({ length: 3000 }, (_, i) => entry(i))
    await Promise.all(all.map((e) => log.append(e)))
    t.same(log.stored(3000), all.reverse(), 'every entry stored, in order')
    const keys = [...db.getKeys()]
    // the first page holds 256 whatever its entries; the later ones what the one before says fits
    for (const key of keys.slice(1)) t.ok(db.getBinary(key)!.length < 4000, `page ${key[1]} under 4 000 bytes`)
    return keys.map((k) => k[1])
  }
  const small = (i: number): Row => ({ at: 'T1', name: `p${i % 13}`, n: i % 7, ctx: i % 26 < 13 ? a : b })
  const grown = await pages('grow', 5000, small)
  t.equal(grown[1], 256, 'the first page holds 256')
  t.ok(grown[2]! - grown[1]! > 256, `the next ones more: ${grown.slice(0, 4).join(', ')}`)
  const ring = await pages('ring', 300, small)
  t.ok(
    ring.every((k, i) => i === 0 || k - ring[i - 1]! <= 300),
    `a page never holds more than the ring: ${ring.slice(0, 4).join(', ')}`
  )
  // a context of its own per entry: the pages shrink to what fits
  const big = await pages('shrink', 5000, (i) => ({ ...small(i), n: i, ctx: { turn: i } }))
  t.ok(big[2]! - big[1]! < 256, `fewer than 256 a page: ${big.slice(0, 4).join(', ')}`)
})

/** Entries of any field values: what a log of columns keeps whole, value for value. */
interface Loose {
  at: string
  name: string
  n: number
  ctx: unknown
}
const LOOSE: Columns<Loose> = {
  names: NAMES,
  row: (e) => [e.at, e.name, e.n, e.ctx],
  entry: (v) => ({ at: v[0] as string, name: v[1] as string, n: v[2] as number, ctx: v[3] })
}

t.test('packed pages keep every kind of value, the order of keys, and which entries shared an object', async (t) => {
  const path = join(dir, 'kinds')
  let store = new Store(path)
  const shared = { phase: 'pre', b: true, n: null, x: 1.5, 2: 'two' }
  const bare: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  bare.z = 'last'
  bare.a = 'first'
  const values: unknown[] = [
    shared,
    shared,
    { nested: { deep: [1, 'two'] }, s: 'x' },
    { hole: undefined, s: 'x' },
    { minus: -0 },
    bare,
    { big: 2n ** 60n },
    -0,
    Number.NaN,
    null,
    false,
    '',
    2 ** 53,
    1.5,
    { ['__proto__']: 'own' }
  ]
  const entries: Loose[] = values.map((ctx, i) => ({
    at: i < 8 ? 'T1' : 'T2',
    name: `p${i % 3}`,
    n: i === 4 ? -0 : i,
    ctx
  }))
  let log = new RetainedLog<Loose>({
    name: 'kinds',
    capacity: 100,
    db: store.db<Loose, LogKey>('items'),
    columns: LOOSE
  })
  await Promise.all(entries.map((e) => log.append(e)))
  const raw = [...store.db<unknown, LogKey>('items').getRange()].map(({ value }) => (value as unknown[])[0])
  t.same(raw, [PACKED], 'one packed page')
  await store.close()
  store = new Store(path)
  t.teardown(() => store.close())
  log = new RetainedLog<Loose>({ name: 'kinds', capacity: 100, db: store.db<Loose, LogKey>('items'), columns: LOOSE })
  const back = log.oldestFirst()
  t.equal(back.length, values.length)
  // the last one's key is msgpack's to write (it renames __proto__), as in every page shape
  for (let i = 0; i < values.length - 1; i++) t.same(back[i], entries[i], `entry ${i}`)
  t.ok(Number.isNaN(back[8]!.ctx))
  t.equal(back[0]!.ctx, back[1]!.ctx, 'entries that shared an object share one after the read')
  t.same(Object.keys(back[0]!.ctx as object), Object.keys(shared), 'keys in their order')
  t.same(Object.keys(back[5]!.ctx as object), ['z', 'a'])
  t.ok(Object.hasOwn(back[3]!.ctx as object, 'hole'), 'a key holding undefined is kept')
  t.equal(Object.getPrototypeOf(back[14]!.ctx), Object.prototype, 'a key named __proto__ never sets the prototype')
  t.same(Object.values(back[14]!.ctx as object), ['own'])
  t.equal((back[6]!.ctx as { big: bigint }).big, 2n ** 60n)
})

t.test('a page of more than 256 distinct values takes two bytes a slot', async (t) => {
  const store = new Store(join(dir, 'wide'))
  t.teardown(() => store.close())
  const db = store.db<Row, LogKey>('items')
  const log = new RetainedLog<Row>({ name: 'wide', capacity: 1000, db, columns: COLUMNS })
  const entries = Array.from({ length: 200 }, (_, n) => ({
    at: 'T1',
    name: `p${n}`,
    n: 1000 + n,
    ctx: n < 100 ? a : b
  }))
  await Promise.all(entries.map((e) => log.append(e)))
  const [page] = [...db.getRange()].map(({ value }) => value as unknown as unknown[])
  t.equal((page![3] as unknown[]).length, 1 + 200 + 200 + 2 + 3, 'T1, the names, the numbers, two records, turn 1 2')
  t.equal((page![5] as Uint8Array).length, 3 * 200 * 2, 'name, n and ctx vary: two bytes per entry each')
  t.same(log.stored(1000), [...entries].reverse())
})

t.test('a page holding an array value is stored as rows, and rows pages read beside packed ones', async (t) => {
  const path = join(dir, 'array')
  let store = new Store(path)
  let db = store.db<Loose, LogKey>('items')
  await db.put([Date.now(), 0], [NAMES, ['T0', 'old', 0, a], [undefined, 'older', 1]] as unknown as Loose)
  let log = new RetainedLog<Loose>({ name: 'array', capacity: 10, db, columns: LOOSE })
  await log.append({ at: 'T1', name: 'list', n: 2, ctx: ['an', 'array'] })
  await new Promise((resolve) => setImmediate(resolve))
  await log.append({ at: 'T1', name: 'packed', n: 3, ctx: a })
  t.same(
    [...db.getRange()].map(({ value }) => {
      const head = (value as unknown as unknown[])[0]
      return Array.isArray(head) ? 'rows' : head
    }),
    ['rows', 'rows', PACKED]
  )
  await store.close()
  store = new Store(path)
  t.teardown(() => store.close())
  db = store.db<Loose, LogKey>('items')
  log = new RetainedLog<Loose>({ name: 'array', capacity: 10, db, columns: LOOSE })
  t.same(
    log.oldestFirst().map((e) => [e.name, e.n, e.ctx]),
    [
      ['old', 0, a],
      ['older', 1, a],
      ['list', 2, ['an', 'array']],
      ['packed', 3, a]
    ]
  )
})

t.test('a page the packer refuses midway leaves nothing of it in the next page', (t) => {
  const packer = new PagePacker()
  const loose = (e: Loose): unknown[] => [e.at, e.name, e.n, e.ctx]
  const refused: Loose[] = [
    { at: 'T1', name: 'p0', n: 0, ctx: a },
    { at: 'T1', name: 'p1', n: 1, ctx: ['an', 'array'] }
  ]
  t.equal(packer.pack(refused, NAMES, loose), undefined)
  const next = packer.pack(six(), NAMES, COLUMNS.row)!
  t.same(next.slice(0, 3), [PACKED, NAMES, 6])
  const record = (...slots: number[]): string[] => [String.fromCharCode(...slots)]
  t.same(
    next[3],
    ['T1', 'p0', 0, record(4, 5), 'turn', 1, 'p1', 'p2', 2, 'T2', 3, record(4, 8), 4, 5],
    'its values alone'
  )
  t.same(next[4], [-1, -1, -1, -1], 'every column varies')
  t.same([...(next[5] as Uint8Array)], [0, 0, 0, 9, 9, 9, 1, 6, 7, 1, 6, 7, 2, 5, 8, 10, 12, 13, 3, 3, 3, 11, 11, 11])
  t.end()
})

/** A page packed by a new packer and read back, its contexts checked against the page's. */
function packedAndBack(t: Test, page: Row[], what: string): { packed: unknown[]; back: Row[] } {
  const packed = new PagePacker().pack(page, NAMES, COLUMNS.row)!
  const back = fromPacked(packed, (_names, v) => COLUMNS.entry(v))
  t.same(
    back.map((e) => e.ctx),
    page.map((e) => e.ctx),
    what
  )
  return { packed, back }
}

t.test('numbers met by value come back as they were; a record like a recent one is stored once, one object', (t) => {
  // 0.001 and 0.065 share a cell of the number cache; -0 meets 0 as the Map would
  const ns = [0.001, 0.065, 0.001, Number.NaN, 0, -0, 1e300, 0.0005, 0.065, Number.NaN]
  const ctxs: Record<string, unknown>[] = [
    { turn: 1, x: 'a' },
    { turn: 1, x: 'a' },
    { x: 'a', turn: 1 },
    { turn: 1, x: 'b' },
    { turn: 1 },
    { turn: 1, x: 'a' },
    { turn: 1, x: 'a', y: null },
    { turn: 1, x: 'a' },
    { turn: 2, x: 'a' },
    { turn: 1, x: 'a' }
  ]
  const page = ns.map((n, i) => ({ at: 'T1', name: `p${i % 3}`, n, ctx: ctxs[i]! as unknown as Row['ctx'] }))
  const { packed, back } = packedAndBack(t, page, 'every record with its keys and values')
  t.same(
    back.map((e) => Object.keys(e.ctx)),
    ctxs.map((c) => Object.keys(c)),
    'in their order'
  )
  // the records built, newest last, four kept: {turn, x: a}, {x: a, turn}, {turn, x: b}, {turn}; then
  // {turn, x: a} is the first one again, {turn, x: a, y} new, {turn, x: a} built again (the first is
  // four records back), {turn: 2, x: a} new, {turn, x: a} the one built again
  t.equal(back[0]!.ctx, back[1]!.ctx, 'the same keys and values in the same order: one record, one object')
  t.equal(back[0]!.ctx, back[5]!.ctx, 'met again within four records: the same one')
  t.not(back[1]!.ctx, back[2]!.ctx, 'the same fields in another order: a record of its own')
  t.not(back[5]!.ctx, back[7]!.ctx, 'four other records later: stored again')
  t.equal(back[7]!.ctx, back[9]!.ctx, 'and met again within four: that one')
  t.equal((packed[3] as unknown[]).filter((v) => Array.isArray(v)).length, 7, 'seven records for ten objects')
  t.same(
    back.map((e) => e.n),
    [0.001, 0.065, 0.001, Number.NaN, 0, 0, 1e300, 0.0005, 0.065, Number.NaN],
    'every number (-0 as 0, as msgpack writes it)'
  )
  t.equal(
    (packed[3] as unknown[]).filter((v) => typeof v === 'number').length,
    8,
    'each distinct number once, the records 1 and 2 among them'
  )
  t.end()
})

t.test(
  'an object met again within a few entries shares its slot; later, it is stored again with the same fields',
  (t) => {
    const shared = { turn: 1 }
    // the shared one, three others, the shared one (shared), ten others, the shared one (stored again)
    const ctxs = [shared, ...[2, 3, 4].map((turn) => ({ turn })), shared]
    ctxs.push(...[5, 6, 7, 8, 9, 10, 11, 12, 13, 14].map((turn) => ({ turn })), shared)
    const { back } = packedAndBack(
      t,
      ctxs.map((ctx, n) => ({ at: 'T1', name: 'p', n, ctx })),
      'every entry with its fields'
    )
    t.equal(back[0]!.ctx, back[4]!.ctx, 'met again within a few: one object')
    t.not(back[4]!.ctx, back[15]!.ctx, 'met again after many: an object of its own')
    t.end()
  }
)

t.test('strings that follow one another as in the page before are found again, each stored once', (t) => {
  const ctx = { turn: 1 } as unknown as Row['ctx']
  // a chain's order twice, then changed, a name built anew, and one not met before
  const names = ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'c', 'b', ['a'].join(''), 'b', 'd', 'b']
  const page: Row[] = names.map((name, i) => ({ at: 'T1', name, n: i % 2, ctx }))
  const packer = new PagePacker()
  for (let round = 0; round < 2; round++) {
    const packed = packer.pack(page, NAMES, COLUMNS.row)!
    const back = fromPacked(packed, (_names, v) => COLUMNS.entry(v))
    t.same(
      back.map((e) => e.name),
      names,
      `every name in its place (page ${round + 1})`
    )
    const strings = (packed[3] as unknown[]).filter((v) => typeof v === 'string')
    t.same([...strings].sort(), ['T1', 'a', 'b', 'c', 'd', 'turn'], 'each string once')
  }
  t.end()
})
