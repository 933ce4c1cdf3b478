/**
 * A retained log's page packed as columns of indices into one table of the page's distinct
 * values, written `[PACKED, names, count, table, constants, indices]`:
 *   names      the columns' names
 *   count      entries in the page
 *   table      each distinct value once, in the order first met (an object: once per stretch
 *              where it recurs within a few entries); a flat object (string keys,
 *              primitive values) is a record instead: `[string]`, the slots of its keys and
 *              values in the table, alternating, as the string's character codes, once for
 *              objects of the same keys and values met within a few records of each other
 *   constants  per column, the slot every entry of the page holds, or -1 when entries differ
 *   indices    for each column whose entries differ, in order, every entry's slot
 * A slot takes one byte while the table has at most 256 slots, else two (little-endian).
 * Why: msgpack's cost is per element, and a page of rows repeats a policy's name in every row
 * and a turn's context snapshot (a dozen strings) once per phase; a packed page is its
 * distinct values, each once, and one array of bytes (a record is a string: msgpack writes a
 * short string in a fraction of the time binary data takes). Its bytes stay under LMDB's page
 * size for a busy turn's worth of decisions; a larger value goes to overflow pages, which
 * costs LMDB's writer several times a small value's write.
 */

/** The first element of a packed page: entries are never numbers, so no other shape starts with one. */
export const PACKED = 1

/**
 * Slots a page can address: two bytes, below the surrogate code units (a lone one is no
 * character a string survives UTF-8 with); a page with more distinct values is stored as rows.
 */
const MAX_SLOTS = 0xd800

/** Cells of the packer's number cache (a power of two). */
const NUMBER_CELLS = 64

/** Records a packer compares a new one with: a turn's two phases, and the turn before. */
const RECENT_RECORDS = 4

/**
 * Objects a packer tells apart by identity: one met again after more than this many others is
 * stored again, read back as an object of its own with the same fields.
 */
const RECENT_OBJECTS = 8

/** Keys of a flat object kept as a record at most (its character codes are spread into one call). */
const MAX_RECORD_KEYS = 1000

/** Strings, numbers, booleans and null (msgpack writes -0 as 0 in any shape, so Map keys may conflate them). */
function isInternable(v: unknown): boolean {
  const t = typeof v
  return t === 'string' || t === 'number' || t === 'boolean' || v === null
}

/**
 * Builds packed pages; one per log, reused page after page (its scratch arrays grow to the
 * largest page and stay).
 */
export class PagePacker {
  private readonly slots: unknown[] = []
  private readonly slotOf = new Map<unknown, number>()
  private scratch = new Uint32Array(0)
  /**
   * Per column and slot, the slot of the string that followed it in that column, +1 (0: none
   * yet): a turn's policy names come in the chain's order in every turn, so the next one is
   * usually found by one compare rather than a Map lookup. Cleared after each page.
   */
  private after = new Int32Array(0)
  /** One past the highest cell of `after` written in this page. */
  private afterEnd = 0
  /**
   * Numbers met in this page by their value in thousandths (a duration in ms rounded to the
   * microsecond lands in a cell of its own): a Map lookup of a double hashes it, several times
   * the cost of this compare, and a page has a duration per entry.
   */
  private readonly numKey = new Float64Array(NUMBER_CELLS)
  private readonly numSlot = new Int32Array(NUMBER_CELLS).fill(-1)
  /**
   * The last records built in this page, each as its keys, values and slot: a turn's snapshot
   * usually holds the same keys and values as one a turn before it (another phase sits between
   * them), so it takes that record's slot, with no lookup per key and value, and the page holds
   * the record once (read back, the entries share one object with those fields).
   */
  private readonly recent: { keys: string[]; values: unknown[]; slot: number }[] = []
  /**
   * The objects met last in this page and their slots, newest at `objectsAt - 1` (a ring): an
   * object comes back within a few entries (a turn's snapshot around a Prefer's own copy), and a
   * Map keyed by objects gives each a hash on insertion, which cost as much as building the record.
   */
  private readonly objects: unknown[] = new Array<unknown>(RECENT_OBJECTS)
  private readonly objectSlots = new Int32Array(RECENT_OBJECTS)
  private objectsAt = 0

  /**
   * The packed page, or undefined when an entry has no value for a column (undefined), when a
   * value is an array or binary data (the table's own shapes), or when the page has more
   * distinct values than two bytes address: those pages are stored in another shape.
   */
  pack<T>(
    page: readonly T[],
    names: readonly string[],
    row: (e: T, into?: unknown[]) => unknown[],
    changed?: (prev: T, e: T, into: unknown[]) => number
  ): unknown[] | undefined {
    const n = page.length
    const k = names.length
    if (this.scratch.length < n * k) this.scratch = new Uint32Array(n * k)
    const idx = this.scratch
    // every entry's values land in the same row: only the slots are kept
    const into: unknown[] = new Array<unknown>(k)
    const last: unknown[] = new Array<unknown>(k)
    const lastSlot = new Int32Array(k)
    const varies = new Uint8Array(k)
    const diff = k <= 31 ? changed : undefined
    try {
      // the first entry's values all take a slot; each later one's only where it differs
      if (n > 0) {
        const r = row(page[0]!, into)
        for (let j = 0; j < k; j++) {
          const v = r[j]
          const s = this.slot(v)
          if (s < 0) return undefined
          last[j] = v
          lastSlot[j] = s
        }
      }
      for (let i = 1; i < n; i++) {
        const e = page[i]!
        // the columns the log's own compares tell apart from the previous entry's, when it has them
        const moved = diff === undefined ? -1 : diff(page[i - 1]!, e, into)
        const r = diff === undefined ? row(e, into) : into
        for (let j = 0; j < k; j++) {
          // the same value as the previous entry's (a turn's snapshot, source, timestamp): no lookup,
          // and no index while the column has held one value since the page began
          if ((moved & (1 << j)) === 0 || (diff === undefined && r[j] === last[j])) {
            if (varies[j] === 1) idx[j * n + i] = lastSlot[j]!
            continue
          }
          const v = r[j]
          let s: number
          // a duration, in most entries: its cache looked up here, without a call
          if (typeof v === 'number') s = this.numberSlot(v)
          else {
            const at = lastSlot[j]! * k + j
            const guess = at < this.after.length ? this.after[at]! - 1 : -1
            if (guess >= 0 && this.slots[guess] === v) s = guess
            else {
              s = this.slot(v)
              if (s < 0) return undefined
              if (typeof v === 'string') this.follow(at, s)
            }
          }
          if (varies[j] === 0) {
            // its first change: every entry before it held the first entry's slot
            varies[j] = 1
            idx.fill(lastSlot[j]!, j * n, j * n + i)
          }
          last[j] = v
          lastSlot[j] = s
          idx[j * n + i] = s
        }
      }
      const size = this.slots.length
      if (size > MAX_SLOTS) return undefined
      const wide = size > 256
      const table = this.slots.slice()
      const constants: number[] = new Array<number>(k)
      let moving = 0
      for (let j = 0; j < k; j++) {
        constants[j] = varies[j] === 1 ? -1 : lastSlot[j]!
        if (varies[j] === 1) moving++
      }
      const indices = new Uint8Array(moving * n * (wide ? 2 : 1))
      let at = 0
      for (let j = 0; j < k; j++) {
        if (varies[j] === 0) continue
        const from = j * n
        if (wide)
          for (let i = 0; i < n; i++) {
            const s = idx[from + i]!
            indices[at++] = s & 0xff
            indices[at++] = s >>> 8
          }
        else {
          // one copy in C++: every slot is below 256, so each converts to its own byte
          indices.set(idx.subarray(from, from + n), at)
          at += n
        }
      }
      return [PACKED, names, n, table, constants, indices]
    } finally {
      this.slots.length = 0
      this.slotOf.clear()
      this.numSlot.fill(-1)
      this.after.fill(0, 0, this.afterEnd)
      this.afterEnd = 0
      this.recent.length = 0
      this.objects.fill(undefined)
      this.objectsAt = 0
    }
  }

  /** Notes that string slot `s` followed the slot and column that `at` stands for. */
  private follow(at: number, s: number): void {
    if (at >= this.after.length) {
      const grown = new Int32Array(Math.max(256, 2 * (at + 1)))
      grown.set(this.after)
      this.after = grown
    }
    this.after[at] = s + 1
    if (at >= this.afterEnd) this.afterEnd = at + 1
  }

  /** The slot of a value, added to the table when new; -1 for a value the table cannot hold. */
  private slot(v: unknown): number {
    if (typeof v === 'number') return this.numberSlot(v)
    if (isInternable(v)) {
      let s = this.slotOf.get(v)
      if (s === undefined) {
        s = this.slots.push(v) - 1
        this.slotOf.set(v, s)
      }
      return s
    }
    if (v === undefined) return -1
    // a bigint, or what msgpack cannot encode (its put fails as any page's would)
    if (typeof v !== 'object') return this.add(v)
    if (Array.isArray(v) || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return -1
    const met = Math.min(this.objectsAt, RECENT_OBJECTS)
    for (let r = 0; r < met; r++) if (this.objects[r] === v) return this.objectSlots[r]!
    const proto: unknown = Object.getPrototypeOf(v)
    const flat = proto === Object.prototype || proto === null
    const o = v as Record<string, unknown>
    const again = flat ? this.sameAsRecent(o) : -1
    const s = again >= 0 ? again : this.add(v)
    const at = this.objectsAt++ % RECENT_OBJECTS
    this.objects[at] = v
    this.objectSlots[at] = s
    if (!flat || again >= 0) return s
    const keys = Object.keys(o)
    if (keys.length > MAX_RECORD_KEYS) return s
    // in the keys' order, read once (a keyed read per key costs more than the one array)
    const values = Object.values(o)
    // a key named __proto__ would set the prototype when the record is read back: kept as it is
    for (let i = 0; i < keys.length; i++) if (!isInternable(values[i]) || keys[i] === '__proto__') return s
    const pairs: number[] = new Array<number>(keys.length * 2)
    // the record's slot is taken first: a record never refers to itself or to another record
    for (let i = 0; i < keys.length; i++) {
      pairs[2 * i] = this.slot(keys[i])
      pairs[2 * i + 1] = this.slot(values[i])
    }
    const text = String.fromCharCode(...pairs)
    this.slots[s] = [text]
    if (this.recent.length === RECENT_RECORDS) this.recent.shift()
    this.recent.push({ keys, values, slot: s })
    return s
  }

  /**
   * The slot of a recent record with the very keys and values of `o`, in this order, or -1.
   * Values are primitives and compare with `===` (NaN never matches: it takes the lookups). A
   * record in `recent` passed the checks these keys and values need. Read with for-in, whose
   * keyed reads of `o` are by the enumeration's field index: no arrays of keys and values for a
   * record met again (most of a turn's snapshots).
   */
  private sameAsRecent(o: Record<string, unknown>): number {
    next: for (let r = this.recent.length - 1; r >= 0; r--) {
      const rec = this.recent[r]!
      const n = rec.keys.length
      let i = 0
      for (const key in o) {
        if (i === n || rec.keys[i] !== key || rec.values[i] !== o[key]) continue next
        i++
      }
      if (i === n) return rec.slot
    }
    return -1
  }

  /** The slot of a number: small, so the packer's loop takes it inline. */
  private numberSlot(v: number): number {
    const cell = Math.round(v * 1000) & (NUMBER_CELLS - 1)
    // a cell compares with ===, as the Map does (-0 is 0); NaN and a collision go on to the Map
    if (this.numKey[cell] === v && this.numSlot[cell]! >= 0) return this.numSlot[cell]!
    return this.numberMissed(v, cell)
  }

  private numberMissed(v: number, cell: number): number {
    let s = this.slotOf.get(v)
    if (s === undefined) {
      s = this.slots.push(v) - 1
      this.slotOf.set(v, s)
    }
    this.numKey[cell] = v
    this.numSlot[cell] = s
    return s
  }

  /** A value kept as it is (msgpack encodes it): a bigint, an object that is not flat. */
  private add(v: unknown): number {
    return this.slots.push(v) - 1
  }
}

/**
 * About the bytes msgpack writes for a packed page, from above: strings as UTF-8 with a
 * three-byte header, every number as nine bytes, a value kept as it is (not flat) as 64.
 */
export function packedBytes(packed: readonly unknown[]): number {
  let bytes = 16 + (packed[5] as Uint8Array).length + 3 * (packed[4] as number[]).length
  for (const name of packed[1] as string[]) bytes += Buffer.byteLength(name) + 3
  for (const v of packed[3] as unknown[]) {
    if (typeof v === 'string') bytes += Buffer.byteLength(v) + 3
    else if (Array.isArray(v)) bytes += Buffer.byteLength(v[0] as string) + 4
    else if (typeof v === 'number') bytes += 9
    else if (typeof v === 'boolean' || v === null) bytes += 1
    else bytes += 64
  }
  return bytes
}

/** How many entries a packed page holds. */
export function packedCount(packed: readonly unknown[]): number {
  return packed[2] as number
}

/** The slot at position `i` of a byte string of slots. */
function slotAt(bytes: Uint8Array, i: number, wide: boolean): number {
  return wide ? bytes[2 * i]! | (bytes[2 * i + 1]! << 8) : bytes[i]!
}

/**
 * The entries of a packed page, built by `entry` from each entry's values in `names` order.
 * Entries holding the same object (a turn's snapshot) share one rebuilt object, as the
 * entries appended did (unless more than RECENT_OBJECTS others came between them); so do entries
 * holding flat objects of the same keys and values met within RECENT_RECORDS records (the
 * snapshots of consecutive turns of one conversation): they were equal, and read back as one.
 */
export function fromPacked<T>(
  value: readonly unknown[],
  entry: (names: readonly string[], values: unknown[]) => T
): T[] {
  const names = value[1] as string[]
  const n = value[2] as number
  const table = (value[3] as unknown[]).slice()
  const constants = value[4] as number[]
  const indices = value[5] as Uint8Array
  const k = names.length
  const wide = table.length > 256
  for (let s = 0; s < table.length; s++) {
    const v = table[s]
    if (!Array.isArray(v)) continue
    const pairs = v[0] as string
    const o: Record<string, unknown> = {}
    for (let i = 0; i < pairs.length; i += 2) o[table[pairs.charCodeAt(i)] as string] = table[pairs.charCodeAt(i + 1)]
    table[s] = o
  }
  const starts: number[] = new Array<number>(k)
  let moving = 0
  for (let j = 0; j < k; j++) starts[j] = constants[j]! < 0 ? n * moving++ : -1
  const out: T[] = new Array<T>(n)
  for (let i = 0; i < n; i++) {
    const values: unknown[] = new Array<unknown>(k)
    for (let j = 0; j < k; j++)
      values[j] = table[starts[j]! < 0 ? constants[j]! : slotAt(indices, starts[j]! + i, wide)]
    out[i] = entry(names, values)
  }
  return out
}
