/**
 * How a retained log's page (entries appended together, oldest first) is one LMDB value, keyed
 * by its first entry's key: entry `i` of a page keyed `[ms, seq]` has the key `[ms, seq + i]`.
 * Four shapes read, newest last:
 *   an object                    one entry (logs before pages)
 *   `[entry, entry, ...]`        entries as objects; a shared field left out takes the previous entry's
 *   `[columns, row, row, ...]`   entries as rows of their column values (`columns` names them); a
 *                                value left out (`undefined`, or past the row's end) is the
 *                                previous row's
 *   `[PACKED, columns, ...]`     entries as columns of slots in a table of the page's distinct
 *                                values (packed-page.ts)
 * Entries themselves are never arrays or numbers, so the shapes cannot be mistaken for one
 * another. A log with columns writes packed pages, and rows for a page whose values the table
 * cannot hold; rows encode in a fraction of the CPU of objects (msgpack walks no keys), packed
 * pages in a fraction of that of rows.
 */
import { fromPacked, PACKED } from './packed-page.js'

/** `[epoch ms, sequence]`: entries sort by time, and by append order within a millisecond. */
export type LogKey = [number, number]

/** A page's entries as handed to and from the log. */
export type Page<T> = T[]

/** Entries per page at most: one value stays small and one bad entry is found fast. */
export const PAGE_MAX = 64
/**
 * Entries per page of rows at most (a packed log's first page; its later ones see
 * PACKED_PAGE_MAX): a row takes a fraction of an object's bytes (most rows are
 * a name and a duration), so such a page is no bigger than one of objects, and a log whose
 * appends come faster than the event loop turns (a burst of turns) wakes LMDB's writer less.
 */
export const ROW_PAGE_MAX = 256
/**
 * A log of packed pages steers its page size by bytes instead: a page fills up to as many
 * entries as the last one says fit in `PACKED_PAGE_BYTES` (never fewer than `PAGE_MAX`, never
 * more than this, nor than the log keeps in memory). A write costs per commit and per `put`,
 * hardly per byte (raw lmdb-js on the 2-core machine: a commit about 300 µs of CPU with its sync,
 * a put about 5 µs more, 400 or 3 800 bytes alike). A value above about 2 000 bytes (half of
 * LMDB's 4 KiB page, less its headers) takes an overflow page, so a full page does; pages kept
 * below that, twice the puts, cost about 15 % more CPU per entry.
 */
export const PACKED_PAGE_MAX = 1024
/** The bytes a packed page aims below (an estimate: see `packedBytes`). */
export const PACKED_PAGE_BYTES = 3800

/**
 * A page's entries in any stored shape; an entry whose shared field was left out takes the
 * previous entry's. Rows under the log's own `columns` are built by its `entry`.
 */
export function entriesOf<T>(value: unknown, shared: keyof T | undefined, columns?: Columns<T>): Page<T> {
  if (!Array.isArray(value)) return [value as T]
  const head: unknown = value[0]
  if (Array.isArray(head)) return fromRows<T>(head as string[], value, columns)
  if (head === PACKED)
    return fromPacked<T>(value, (names, v) =>
      columns !== undefined && sameNames(names, columns.names) ? columns.entry(v) : byNames<T>(names, v)
    )
  const page = value as Page<T>
  if (shared !== undefined)
    for (let i = 1; i < page.length; i++) {
      const e = page[i] as T
      if (e[shared] === undefined) e[shared] = (page[i - 1] as T)[shared]
    }
  return page
}

function fromRows<T>(names: readonly string[], value: unknown[], columns: Columns<T> | undefined): Page<T> {
  const own = columns !== undefined && sameNames(names, columns.names)
  const n = names.length
  const out: T[] = new Array(value.length - 1)
  let prev: unknown[] | undefined
  for (let i = 1; i < value.length; i++) {
    const row = value[i] as unknown[]
    for (let j = 0; j < n; j++) if (row[j] === undefined && prev !== undefined) row[j] = prev[j]
    prev = row
    out[i - 1] = own ? columns.entry(row) : byNames<T>(names, row)
  }
  return out
}

/** The entry of values of columns other than the log's own (written under other columns). */
function byNames<T>(names: readonly string[], values: readonly unknown[]): T {
  const e: Record<string, unknown> = {}
  for (let j = 0; j < names.length; j++) e[names[j]!] = values[j]
  return e as T
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * A log's row shape: its column names, the ones that change from entry to entry first, and the
 * two conversions written out (a loop of keyed reads and writes costs several times more).
 */
export interface Columns<T> {
  names: readonly (keyof T & string)[]
  /**
   * `names.map((n) => e[n])`; written into `into` and returned when given (a scratch row the
   * packer reuses entry after entry: a new array per entry was most of what a page allocated).
   */
  row: (e: T, into?: unknown[]) => unknown[]
  /**
   * Optional, for at most 31 columns: a bit (`1 << j`) for each column whose value in `e` is not
   * `===` to its value in `prev`, that value written to `into[j]` (the other cells are left as
   * they are). Written out per field, each compare sees one kind of value (a string, a number, an
   * object) and only what changed is read out; the packer's compare of a whole row's cells saw
   * every kind and took V8's generic equality on every cell.
   */
  changed?: (prev: T, e: T, into: unknown[]) => number
  /** The entry of a row of `names` (its fields in whatever order entries are made with). */
  entry: (values: readonly unknown[]) => T
}

/**
 * The page as `[columns, row, ...]`, each value equal to the previous row's left out; undefined
 * when an entry has no value for a column (the object shape keeps such an entry as it is).
 * Numbers are always written: `-0 === 0`, and a float costs no more than the marker.
 */
export function toRows<T>(page: Page<T>, columns: Columns<T>): unknown[] | undefined {
  const out: unknown[] = new Array(page.length + 1)
  out[0] = columns.names
  const n = columns.names.length
  // the newest value of each column: what a left-out value stands for
  const last: unknown[] = new Array(n)
  for (let i = 0; i < page.length; i++) {
    const row = columns.row(page[i]!)
    let end = 0
    for (let j = 0; j < n; j++) {
      const v = row[j]
      if (v === undefined) return undefined
      if (i > 0 && v === last[j] && typeof v !== 'number') row[j] = undefined
      else {
        last[j] = v
        end = j + 1
      }
    }
    // the values repeated from the previous row at its end are not written at all (a copy of the
    // rest: shortening the row in place costs twice as much as the copy)
    out[i + 1] = end < n ? row.slice(0, end) : row
  }
  return out
}

/** How many entries a stored value holds, without building them. */
export function entryCountOf(value: unknown): number {
  if (!Array.isArray(value)) return 1
  if (value[0] === PACKED) return value[2] as number
  return Array.isArray(value[0]) ? value.length - 1 : value.length
}

/**
 * Removes a log's oldest whole pages holding only sequences below `cut`, read from the keys alone
 * (a page's entries end where the next page's key begins); a failed removal goes to `failed`.
 */
export function removePagesBelow(
  db: { getKeys(): Iterable<[number, number]>; remove(key: [number, number]): Promise<unknown> },
  cut: number,
  failed: (err: unknown) => void
): void {
  let prev: [number, number] | undefined
  for (const key of db.getKeys()) {
    // `prev` holds sequences below `key`'s first: all outside the retention once that is <= cut
    if (key[1] > cut) break
    if (prev !== undefined) db.remove(prev).then(undefined, failed)
    prev = key
  }
}

/**
 * How many entries the next packed page holds: as many as this one's bytes say fit below
 * PACKED_PAGE_BYTES (a page's fixed part counts against each entry, so a small page errs low),
 * at least PAGE_MAX and at most `limit`.
 */
export function nextPageMax(entries: number, bytes: number, limit: number): number {
  const fits = Math.floor((entries * PACKED_PAGE_BYTES) / Math.max(1, bytes))
  return Math.max(Math.min(PAGE_MAX, limit), Math.min(limit, fits))
}
