import type { Database } from 'lmdb'
import { RingBuffer } from './ring-buffer.js'
import { entriesOf, type Columns, type LogKey } from './log-page.js'
import { PageWriter, type PendingPage } from './page-writer.js'
import { warn, type WriteFailureReport } from './write-failure.js'

export type { LogKey } from './log-page.js'

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
   * How long the entries wait for more before they are written together (0: to the end of the
   * event-loop turn): full pages wait too, up to MAX_HELD entries. Each write is an LMDB commit,
   * which costs far more than the entries: a server that runs a turn or two per loop turn paid one
   * per turn. `written()` writes at once.
   */
  flushMs?: number | undefined
}

/** Entries of full pages a log with a window keeps unwritten at most (a few hundred KB). */
const MAX_HELD = 8192

/**
 * An append-only log kept twice: the newest `capacity` entries in a ring buffer, every entry in LMDB
 * up to `retention`, reloaded at start-up. Keys continue the sequence of the last stored key, so
 * appends after a restart sort after the ones before it. Appends never wait for the disk: the
 * entries appended in one turn of the event loop (a governed turn's policy evaluations, and those
 * of other turns running beside it) are written as one LMDB value, a page, at the end of that
 * turn, which costs a fraction of one `put` per entry; with `flushMs`, the pages of that window
 * are written together, one commit. Every append of a page hands back the page's promise for
 * callers that want durability: it resolves once the page is committed, so an acknowledged entry
 * survives a crash. A failed write is reported (counted and logged where the platform wires it)
 * whether or not anyone awaits it.
 */
export class RetainedLog<T> {
  readonly name: string
  /** Values in a ring, their keys' two numbers beside it where the ring puts them: an append allocates nothing. */
  private readonly values: RingBuffer<T>
  private readonly keyMs: Float64Array
  private readonly keySeq: Float64Array
  private readonly db: Database<unknown, LogKey> | undefined
  private readonly shared: (keyof T & string) | undefined
  private readonly columns: Columns<T> | undefined
  private readonly writer: PageWriter<T> | undefined
  private seq = 0
  /** The page being filled, written at the end of the event loop's turn (or of the window). */
  private page: PendingPage<T> | undefined
  /** The newest page's promise: LMDB commits pages in the order they were put. */
  private lastWritten: Promise<void> = DONE
  private readonly flushMs: number
  private flushTimer: ReturnType<typeof setTimeout> | undefined
  /**
   * Full pages waiting for the window, oldest first, packed when the log has columns: readers
   * find their entries below the ring.
   */
  private held: PendingPage<T>[] = []
  private heldEntries = 0

  constructor(opts: RetainedLogOptions<T>) {
    this.name = opts.name
    this.values = new RingBuffer(opts.capacity)
    this.keyMs = new Float64Array(opts.capacity)
    this.keySeq = new Float64Array(opts.capacity)
    this.db = opts.db as Database<unknown, LogKey> | undefined
    this.shared = opts.sharedField
    this.columns = opts.columns
    this.flushMs = opts.flushMs ?? 0
    const report = opts.onWriteFailure ?? warn
    if (this.db === undefined) return
    this.writer = new PageWriter<T>(
      this.db,
      { capacity: opts.capacity, retention: opts.retention ?? 100_000, shared: this.shared, columns: this.columns },
      () => this.seq,
      (err) => {
        report(this.name, err)
      }
    )
    this.reload(this.db, opts.capacity)
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
    const page = this.page ?? this.open()
    this.push(page.key[0], this.seq++, value)
    page.entries.push(value)
    if (page.entries.length >= this.writer!.pageMax) this.sealed(page)
    return page.written
  }

  /** The page being filled is full: written now without a window (or past MAX_HELD), else held for it. */
  private sealed(page: PendingPage<T>): void {
    if (this.flushMs === 0 || this.heldEntries + page.entries.length > MAX_HELD) {
      this.flush()
      return
    }
    this.heldEntries += page.entries.length
    this.writer!.seal(page)
    this.held.push(page)
    this.page = undefined
  }

  private open(): PendingPage<T> {
    let settle: (err?: unknown) => void = () => {}
    const written = new Promise<void>((resolve, reject) => {
      settle = (err) => {
        if (err === undefined) resolve()
        else reject(err)
      }
    })
    // reported already: callers that ignore it must not turn it into an unhandled rejection
    written.catch(() => {})
    const page: PendingPage<T> = { key: [Date.now(), this.seq], entries: [], written, settle }
    this.page = page
    this.lastWritten = written
    // not at the end of the microtask run: a turn's two phases (and concurrent turns) share the put
    if (this.flushMs === 0) setImmediate(this.flushPage)
    else this.flushTimer ??= setTimeout(this.flushPage, this.flushMs)
    return page
  }

  /**
   * Resolves once every entry appended so far is committed (at once without LMDB): the newest
   * page's promise, since LMDB commits pages in the order they were put. Rejects if that write
   * failed. A page still waiting for more entries is written now: whoever asks is acknowledging.
   */
  written(): Promise<void> {
    this.flush()
    return this.lastWritten
  }

  private readonly flushPage = (): void => {
    this.flush()
  }

  /** Writes the held pages and the page being filled, in one event-loop turn: one commit. */
  private flush(): void {
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    const pages = this.held
    if (this.page !== undefined) pages.push(this.page)
    if (pages.length === 0) return
    this.held = []
    this.heldEntries = 0
    this.page = undefined
    for (const page of pages) this.writer!.write(page)
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
    return this.keyed(limit).map((k) => k.value)
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
    this.heldBelow(under, limit, out)
    if (out.length >= limit) return out
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

  /**
   * Adds to `out`, up to `limit` in all, the entries of the held pages below sequence `under`
   * (they sit between the ring and LMDB), newest first.
   */
  private heldBelow(under: number, limit: number, out: Keyed<T>[]): void {
    for (let h = this.held.length - 1; h >= 0 && out.length < limit; h--) {
      const page = this.held[h]!
      const key = page.key
      if (key[1] >= under) continue
      const entries = page.packed !== undefined ? entriesOf<T>(page.packed, this.shared, this.columns) : page.entries
      for (let i = entries.length - 1; i >= 0 && out.length < limit; i--)
        if (key[1] + i < under) out.push({ key: [key[0], key[1] + i], value: entries[i]! })
    }
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
}

const DONE: Promise<void> = Promise.resolve()
