import type { Database } from 'lmdb'
import { RingBuffer } from './ring-buffer.js'
import {
  entriesOf,
  nextPageMax,
  removePagesBelow,
  toRows,
  PACKED_PAGE_MAX,
  PAGE_MAX,
  ROW_PAGE_MAX,
  type Columns,
  type Page
} from './log-page.js'
import { PagePacker, packedBytes } from './packed-page.js'
import { warn, type WriteFailureReport } from './write-failure.js'

/** `[epoch ms, sequence]`: entries sort by time, and by append order within a millisecond. */
export type LogKey = [number, number]

/** An entry with its key, as a page of a log reads it. */
export interface Keyed<T> {
  key: LogKey
  value: T
}

export interface RetainedLogOptions<T> {
  /** Names the log in metrics and log lines (`audit`, `decisions`). */
  name: string
  /** Entries kept in memory. */
  capacity: number
  /** Where every entry is kept (in pages of entries); memory only without it. */
  db?: Database<T | T[], LogKey> | Database<T, LogKey> | undefined
  /** Entries kept in LMDB, rounded up to a page; the oldest beyond it are removed every `TRIM_EVERY` appends. */
  retention?: number | undefined
  /**
   * A field that consecutive entries often share by reference (a turn's context snapshot): a page
   * stores it once per run of the same object. Its value is never `undefined`.
   */
  sharedField?: (keyof T & string) | undefined
  /**
   * Stores each entry as a row of these fields' values, a value equal to the previous row's left
   * out (see log-page.ts): every field an entry keeps must be a column; other fields are not
   * stored. A page holding an entry without a value for a column is stored as objects instead.
   */
  columns?: Columns<T> | undefined
  /** Defaults to a process warning, so a failure is never silent even where nothing is wired. */
  onWriteFailure?: WriteFailureReport | undefined
  /**
   * How long a page that is not full waits for more entries before it is written (0: to the end of
   * the event-loop turn). Every write is an LMDB commit, which costs far more than the entries: a
   * server that runs a turn or two per loop turn paid one per turn. `written()` writes at once.
   */
  flushMs?: number | undefined
}

/** Appends between two retention trims: a trim reads the oldest keys, so it stays cheap. */
const TRIM_EVERY = 1000

/**
 * An append-only log kept twice: the newest `capacity` entries in a ring buffer, every entry in LMDB
 * up to `retention`, reloaded at start-up. Keys continue the sequence of the last stored key, so
 * appends after a restart sort after the ones before it. Appends never wait for the disk: the
 * entries appended in one turn of the event loop (a governed turn's policy evaluations, and those
 * of other turns running beside it) are written as one LMDB value, a page, at the end of that
 * turn (or `flushMs` after the page's first entry), which costs a fraction of one `put` per entry. Every append
 * of a page hands back the page's promise for callers that want durability: it resolves once the
 * page is committed, so an acknowledged entry survives a crash. A failed write is reported
 * (counted and logged where the platform wires it) whether or not anyone awaits it.
 */
export class RetainedLog<T> {
  readonly name: string
  /** Values in a ring, their keys' two numbers beside it where the ring puts them: an append allocates nothing. */
  private readonly values: RingBuffer<T>
  private readonly keyMs: Float64Array
  private readonly keySeq: Float64Array
  private readonly db: Database<unknown, LogKey> | undefined
  private readonly retention: number
  /** Entries a page holds before it is written without waiting for the event loop's turn. */
  private pageMax: number
  /** The most `pageMax` may grow to (packed pages steer it by their bytes). */
  private readonly pageLimit: number
  private readonly shared: (keyof T & string) | undefined
  private readonly columns: Columns<T> | undefined
  private readonly packer: PagePacker | undefined
  private seq = 0
  private writes = 0
  private trimDue = false
  private readonly failed: (err: unknown) => void
  /** The page being filled, written at the end of the current turn of the event loop. */
  private page: Page<T> | undefined
  private pageKey: LogKey = [0, 0]
  private pageWritten: Promise<void> = DONE
  private settlePage: (err?: unknown) => void = () => {}
  private readonly flushMs: number
  private flushTimer: ReturnType<typeof setTimeout> | undefined

  constructor(opts: RetainedLogOptions<T>) {
    this.name = opts.name
    this.values = new RingBuffer(opts.capacity)
    this.keyMs = new Float64Array(opts.capacity)
    this.keySeq = new Float64Array(opts.capacity)
    this.db = opts.db as Database<unknown, LogKey> | undefined
    this.retention = opts.retention ?? 100_000
    this.shared = opts.sharedField
    this.columns = opts.columns
    this.packer = opts.columns === undefined ? undefined : new PagePacker()
    this.flushMs = opts.flushMs ?? 0
    // every unwritten entry stays in the ring, so reads below the ring never miss one
    this.pageMax = Math.max(1, Math.min(opts.columns !== undefined ? ROW_PAGE_MAX : PAGE_MAX, opts.capacity))
    this.pageLimit = Math.max(1, Math.min(opts.columns !== undefined ? PACKED_PAGE_MAX : PAGE_MAX, opts.capacity))
    const report = opts.onWriteFailure ?? warn
    this.failed = (err) => {
      report(this.name, err)
    }
    if (this.db !== undefined) this.reload(this.db, opts.capacity)
  }

  private reload(db: Database<unknown, LogKey>, capacity: number): void {
    const keys: LogKey[] = []
    const values: T[] = []
    for (const { key, value } of db.getRange({ reverse: true })) {
      const page = entriesOf<T>(value, this.shared, this.columns)
      if (keys.length === 0 && values.length === 0) this.seq = key[1] + page.length
      for (let i = page.length - 1; i >= 0 && values.length < capacity; i--) {
        keys.push([key[0], key[1] + i])
        values.push(page[i]!)
      }
      if (values.length >= capacity) break
    }
    for (let i = values.length - 1; i >= 0; i--) this.push(keys[i]![0], keys[i]![1], values[i]!)
  }

  private push(ms: number, seq: number, value: T): void {
    const p = this.values.push(value)
    this.keyMs[p] = ms
    this.keySeq[p] = seq
  }

  get capacity(): number {
    return this.values.capacity
  }

  /** Entries in memory. */
  get size(): number {
    return this.values.size
  }

  /**
   * Adds one entry. Resolves once its page is committed (at once without LMDB); rejects if the
   * write fails, which is reported either way, so callers may also ignore the promise. An entry the
   * encoder rejects is reported and rejects its page's appends; the page's other entries are kept.
   */
  append(value: T): Promise<void> {
    if (this.db === undefined) {
      this.push(Date.now(), this.seq++, value)
      return DONE
    }
    let page = this.page
    if (page === undefined) {
      page = this.open()
    }
    this.push(this.pageKey[0], this.seq++, value)
    page.push(value)
    const written = this.pageWritten
    if (page.length >= this.pageMax) this.flush()
    return written
  }

  private open(): Page<T> {
    const page: Page<T> = []
    this.page = page
    this.pageKey = [Date.now(), this.seq]
    this.pageWritten = new Promise<void>((resolve, reject) => {
      this.settlePage = (err) => {
        if (err === undefined) resolve()
        else reject(err)
      }
    })
    // reported already: callers that ignore it must not turn it into an unhandled rejection
    this.pageWritten.catch(() => {})
    // not at the end of the microtask run: a turn's two phases (and concurrent turns) share the put
    if (this.flushMs > 0) this.flushTimer = setTimeout(this.flushPage, this.flushMs)
    else setImmediate(this.flushPage)
    return page
  }

  /**
   * Resolves once every entry appended so far is committed (at once without LMDB): the newest
   * page's promise, since LMDB commits pages in the order they were put. Rejects if that write
   * failed. A page still waiting for more entries is written now: whoever asks is acknowledging.
   */
  written(): Promise<void> {
    this.flush()
    return this.pageWritten
  }

  private readonly flushPage = (): void => {
    this.flush()
  }

  /** Writes the page being filled, if any. */
  private flush(): void {
    const page = this.page
    if (page === undefined) return
    this.page = undefined
    clearTimeout(this.flushTimer)
    const db = this.db!
    const key = this.pageKey
    const settle = this.settlePage
    let put: Promise<unknown>
    try {
      put = this.put(db, key, page)
      put.then(
        () => settle(),
        (err: unknown) => {
          this.failed(err)
          settle(err)
        }
      )
    } catch {
      // the encoder rejected an entry before anything was queued: write them one by one
      this.putEach(db, key, page, settle)
    }
    const before = this.writes
    this.writes += page.length
    if (!this.trimDue && Math.floor(this.writes / TRIM_EVERY) > Math.floor(before / TRIM_EVERY)) {
      this.trimDue = true
      // once this page is committed (or failed): the trim sees it and every page before it
      this.pageWritten.then(this.trim, this.trim)
    }
  }

  /**
   * Writes a page packed when the log has columns (as rows if the packing cannot hold it), else
   * with each repeated shared field left out. lmdb encodes the value inside `put`, so the
   * entries (also held by the ring and its readers) are restored before anyone sees them.
   */
  private put(db: Database<unknown, LogKey>, key: LogKey, page: Page<T>): Promise<unknown> {
    if (this.columns !== undefined) {
      const packed = this.packer!.pack(page, this.columns.names, this.columns.row, this.columns.changed)
      if (packed !== undefined) {
        this.pageMax = nextPageMax(page.length, packedBytes(packed), this.pageLimit)
        return db.put(key, packed)
      }
      const rows = toRows(page, this.columns)
      if (rows !== undefined) return db.put(key, rows)
    }
    const f = this.shared
    if (f === undefined || page.length < 2) return db.put(key, page)
    const left: T[typeof f][] = []
    for (let i = page.length - 1; i > 0; i--) {
      const e = page[i] as T
      const v = e[f]
      left.push(v)
      if (v === (page[i - 1] as T)[f]) e[f] = undefined as T[typeof f]
    }
    try {
      return db.put(key, page)
    } finally {
      for (let i = page.length - 1, j = 0; i > 0; i--, j++) (page[i] as T)[f] = left[j] as T[typeof f]
    }
  }

  /** Each entry as its own page, so only the entries the encoder rejects are lost (and reported). */
  private putEach(db: Database<unknown, LogKey>, key: LogKey, page: Page<T>, settle: (err?: unknown) => void): void {
    let failure: unknown
    const puts: Promise<unknown>[] = []
    for (let i = 0; i < page.length; i++) {
      try {
        puts.push(db.put([key[0], key[1] + i], [page[i]!]))
      } catch (err) {
        this.failed(err)
        failure ??= err
      }
    }
    Promise.all(puts).then(
      () => settle(failure),
      (err: unknown) => {
        this.failed(err)
        settle(err)
      }
    )
  }

  /** The newest `limit` entries in memory, oldest first. */
  oldestFirst(limit?: number): T[] {
    return this.values.last(limit)
  }

  /** The newest `limit` entries in memory, newest first. */
  inMemory(limit?: number): T[] {
    return this.values.newest(limit)
  }

  /** The newest `limit` entries, newest first: from memory, then from LMDB below the oldest in memory. */
  newest(limit: number): T[] {
    const out = this.values.newest(limit)
    // older entries live only in LMDB once the ring is full; continue below the oldest ring key
    if (out.length >= limit || this.db === undefined || this.values.size < this.values.capacity || out.length === 0)
      return out
    const start: LogKey = [this.keyMs[this.values.position(0)]!, this.keySeq[this.values.position(0)]!]
    // the page holding the oldest ring entry sorts at or before its key
    for (const { key, value } of this.db.getRange({ reverse: true, start })) {
      const page = entriesOf<T>(value, this.shared, this.columns)
      for (let i = page.length - 1; i >= 0; i--) {
        if (key[1] + i >= start[1]) continue
        out.push(page[i]!)
        if (out.length >= limit) return out
      }
    }
    return out
  }

  /**
   * A bound above every entry appended so far (the key the next append takes, at the latest
   * possible time): a reader that pages below it never sees entries appended after it started.
   */
  get top(): LogKey {
    return [Number.MAX_SAFE_INTEGER, this.seq]
  }

  /**
   * The newest `limit` entries whose keys sort below `below` (all when undefined), newest first,
   * with their keys: from memory, then from LMDB below the oldest in memory. Paging with the last
   * key read as the next `below` walks every retained entry once.
   */
  keyed(limit: number, below?: LogKey): Keyed<T>[] {
    const out: Keyed<T>[] = []
    if (!(limit > 0)) return out
    const size = this.values.size
    const belowSeq = below === undefined ? Number.POSITIVE_INFINITY : below[1]
    // sequences ascend from the oldest in memory to the newest: find the newest below the bound
    let lo = 0
    let hi = size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.keySeq[this.values.position(mid)]! < belowSeq) lo = mid + 1
      else hi = mid
    }
    for (let i = lo - 1; i >= 0 && out.length < limit; i--) {
      const p = this.values.position(i)
      out.push({ key: [this.keyMs[p]!, this.keySeq[p]!], value: this.values.at(i)! })
    }
    // below the ring, entries live only in LMDB, and only once the ring is full
    if (out.length >= limit || this.db === undefined || size < this.values.capacity) return out
    const oldest = this.values.position(0)
    const oldestSeq = this.keySeq[oldest]!
    const start: LogKey = below !== undefined && belowSeq <= oldestSeq ? below : [this.keyMs[oldest]!, oldestSeq]
    const under = Math.min(belowSeq, oldestSeq)
    // the page holding the newest entry wanted sorts at or before `start`
    for (const { key, value } of this.db.getRange({ reverse: true, start })) {
      const page = entriesOf<T>(value, this.shared, this.columns)
      for (let i = page.length - 1; i >= 0; i--) {
        if (key[1] + i >= under) continue
        out.push({ key: [key[0], key[1] + i], value: page[i]! })
        if (out.length >= limit) return out
      }
    }
    return out
  }

  /** The newest `limit` committed entries read from LMDB, newest first (memory without LMDB). */
  stored(limit: number): T[] {
    if (this.db === undefined) return this.values.newest(limit)
    const out: T[] = []
    if (limit <= 0) return out
    for (const { value } of this.db.getRange({ reverse: true })) {
      const page = entriesOf<T>(value, this.shared, this.columns)
      for (let i = page.length - 1; i >= 0; i--) {
        out.push(page[i]!)
        if (out.length >= limit) return out
      }
    }
    return out
  }

  /**
   * Removes the oldest whole pages whose entries all fall outside the newest `retention` appended
   * (keys only, no value read). The removals ride in the pages' write batch: a transaction of its
   * own cost a commit and a round trip to LMDB's writer. Run once a page is committed, never in an
   * append, so its read snapshot never spans a burst of appends (pinning every page freed after it).
   */
  private readonly trim = (): void => {
    this.trimDue = false
    try {
      removePagesBelow(this.db!, this.seq - this.retention, this.failed)
    } catch (err) {
      this.failed(err)
    }
  }
}

const DONE: Promise<void> = Promise.resolve()
