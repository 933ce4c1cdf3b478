import type { Database } from 'lmdb'
import {
  entriesOf,
  nextPageMax,
  removePagesBelow,
  toRows,
  PACKED_PAGE_MAX,
  PAGE_MAX,
  ROW_PAGE_MAX,
  type Columns,
  type LogKey,
  type Page
} from './log-page.js'
import { PagePacker, packedBytes, packedCount } from './packed-page.js'

/** Appends between two retention trims: a trim reads the oldest keys, so it stays cheap. */
const TRIM_EVERY = 1000

/** A page not written yet: its key, its entries, and the promise its appends hand back. */
export interface PendingPage<T> {
  key: LogKey
  /** Its entries; empty once `packed` holds them. */
  entries: Page<T>
  /** The page packed ahead of its write (`PageWriter.seal`), as it will be put. */
  packed?: unknown[]
  written: Promise<void>
  settle: (err?: unknown) => void
}

/**
 * How a retained log's pages become LMDB values: packed when the log has columns (the page size
 * steered by their bytes), else rows or objects; and the retention trim behind them.
 */
export class PageWriter<T> {
  /** Entries a page holds before it is full. */
  pageMax: number
  /** The most `pageMax` may grow to (packed pages steer it by their bytes). */
  private readonly pageLimit: number
  private readonly packer: PagePacker | undefined
  private writes = 0
  private trimDue = false

  constructor(
    private readonly db: Database<unknown, LogKey>,
    private readonly opts: {
      capacity: number
      retention: number
      shared: (keyof T & string) | undefined
      columns: Columns<T> | undefined
    },
    /** The log's next sequence: the trim keeps the `retention` below it. */
    private readonly seq: () => number,
    private readonly failed: (err: unknown) => void
  ) {
    const { columns, capacity } = opts
    this.packer = columns === undefined ? undefined : new PagePacker()
    // every entry of a page being filled stays in the ring, so reads below the ring never miss one
    this.pageMax = Math.max(1, Math.min(columns !== undefined ? ROW_PAGE_MAX : PAGE_MAX, capacity))
    this.pageLimit = Math.max(1, Math.min(columns !== undefined ? PACKED_PAGE_MAX : PAGE_MAX, capacity))
  }

  /**
   * Puts one page (its commit settles it); every `TRIM_EVERY` entries written, once that page is
   * committed, trims what the retention leaves out.
   */
  write(pending: PendingPage<T>): void {
    if (pending.packed === undefined) this.seal(pending)
    const { key, packed, written, settle } = pending
    const db = this.db
    let page = pending.entries
    let put: Promise<unknown>
    try {
      put = packed !== undefined ? db.put(key, packed) : this.put(db, key, page)
      put.then(
        () => settle(),
        (err: unknown) => {
          this.failed(err)
          settle(err)
        }
      )
    } catch {
      // the encoder rejected an entry before anything was queued: write them one by one
      if (packed !== undefined) page = entriesOf<T>(packed, this.opts.shared, this.opts.columns)
      this.putEach(db, key, page, settle)
    }
    const before = this.writes
    this.writes += packed !== undefined ? packedCount(packed) : page.length
    if (!this.trimDue && Math.floor(this.writes / TRIM_EVERY) > Math.floor(before / TRIM_EVERY)) {
      this.trimDue = true
      // once this page is committed (or failed): the trim sees it and every page before it
      written.then(this.trim, this.trim)
    }
  }

  /**
   * Packs a page when the log has columns, the page size then steered by its bytes: at its write,
   * or as soon as it is full when it waits for its window, so that it holds one small value
   * instead of its entries, which would otherwise live through young-generation collections,
   * each copying them, and be promoted to old space. A page the packing cannot hold keeps its
   * entries (written as rows or objects); so does one whose packing throws, which its write then
   * reports, as an append never throws.
   */
  seal(page: PendingPage<T>): void {
    const c = this.opts.columns
    if (c === undefined) return
    let packed: unknown[] | undefined
    try {
      packed = this.packer!.pack(page.entries, c.names, c.row, c.changed)
    } catch {
      return
    }
    if (packed === undefined) return
    this.pageMax = nextPageMax(page.entries.length, packedBytes(packed), this.pageLimit)
    page.packed = packed
    page.entries = []
  }

  /**
   * Writes a page the packing could not hold: as rows when the log has columns, else with each
   * repeated shared field left out. lmdb encodes the value inside `put`, so the entries (also
   * held by the ring and its readers) are restored before anyone sees them.
   */
  private put(db: Database<unknown, LogKey>, key: LogKey, page: Page<T>): Promise<unknown> {
    if (this.opts.columns !== undefined) {
      const rows = toRows(page, this.opts.columns)
      if (rows !== undefined) return db.put(key, rows)
    }
    const f = this.opts.shared
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

  /**
   * Removes the oldest whole pages whose entries all fall outside the newest `retention` appended
   * (keys only, no value read). The removals ride in the pages' write batch: a transaction of its
   * own cost a commit and a round trip to LMDB's writer. Run once a page is committed, never in an
   * append, so its read snapshot never spans a burst of appends (pinning every page freed after it).
   */
  private readonly trim = (): void => {
    this.trimDue = false
    try {
      removePagesBelow(this.db, this.seq() - this.opts.retention, this.failed)
    } catch (err) {
      this.failed(err)
    }
  }
}
