import type { Database } from 'lmdb'
import { RingBuffer } from './ring-buffer.js'
import { entryCount } from './lmdb.js'

/** `[epoch ms, sequence]`: entries sort by time, and by append order within a millisecond. */
export type LogKey = [number, number]

/** Told about every failed LMDB write (or trim) of a retained log, with the log's name. */
export type WriteFailureReport = (log: string, err: unknown) => void

export interface RetainedLogOptions<T> {
  /** Names the log in metrics and log lines (`audit`, `decisions`). */
  name: string
  /** Entries kept in memory. */
  capacity: number
  /** Where every entry is kept; memory only without it. */
  db?: Database<T, LogKey> | undefined
  /** Entries kept in LMDB; the oldest beyond it are removed every `TRIM_EVERY` appends. */
  retention?: number | undefined
  /** Defaults to a process warning, so a failure is never silent even where nothing is wired. */
  onWriteFailure?: WriteFailureReport | undefined
}

/** Appends between two retention trims: a trim reads LMDB's statistics, so it stays cheap. */
const TRIM_EVERY = 1000

const warn: WriteFailureReport = (log, err) => {
  process.emitWarning(`store write failed (${log}): ${String((err as Error)?.message ?? err)}`, 'StoreWriteFailure')
}

/** Counts a failure in `counter` (label `log`) and logs it with the error. */
export function countAndLogWriteFailures(
  counter: { inc: (labels: { log: string }) => void },
  logger: { error: (obj: object, msg: string) => void }
): WriteFailureReport {
  return (log, err) => {
    counter.inc({ log })
    logger.error({ err, log }, 'store write failed')
  }
}

/**
 * An append-only log kept twice: the newest `capacity` entries in a ring buffer, every entry in LMDB
 * up to `retention`, reloaded at start-up. Keys continue the sequence of the last stored key, so
 * appends after a restart sort after the ones before it. Appends never wait for the disk: the
 * write's promise is handed back for callers that want durability, and a failed write is reported
 * (counted and logged where the platform wires it) whether or not anyone awaits it.
 */
export class RetainedLog<T> {
  readonly name: string
  /** Values and their keys in two rings, pushed together, so an append allocates no wrapper. */
  private readonly values: RingBuffer<T>
  private readonly keys: RingBuffer<LogKey>
  private readonly db: Database<T, LogKey> | undefined
  private readonly retention: number
  private seq = 0
  private writes = 0
  private readonly failed: (err: unknown) => void

  constructor(opts: RetainedLogOptions<T>) {
    this.name = opts.name
    this.values = new RingBuffer(opts.capacity)
    this.keys = new RingBuffer(opts.capacity)
    this.db = opts.db
    this.retention = opts.retention ?? 100_000
    const report = opts.onWriteFailure ?? warn
    this.failed = (err) => {
      report(this.name, err)
    }
    if (opts.db !== undefined) {
      const recent: { key: LogKey; value: T }[] = []
      for (const { key, value } of opts.db.getRange({ reverse: true, limit: opts.capacity }))
        recent.push({ key, value })
      for (let i = recent.length - 1; i >= 0; i--) {
        this.keys.push(recent[i]!.key)
        this.values.push(recent[i]!.value)
      }
      for (const last of opts.db.getKeys({ reverse: true, limit: 1 })) this.seq = last[1] + 1
    }
  }

  get capacity(): number {
    return this.values.capacity
  }

  /** Entries in memory. */
  get size(): number {
    return this.values.size
  }

  /**
   * Adds one entry. Resolves once it is committed (at once without LMDB); rejects if the write
   * fails, which is reported either way, so callers may also ignore the promise.
   */
  append(value: T): Promise<void> {
    const key: LogKey = [Date.now(), this.seq++]
    this.keys.push(key)
    this.values.push(value)
    const db = this.db
    if (db === undefined) return DONE
    let put: Promise<void>
    try {
      // lmdb resolves `true` (no conditional write here); callers only wait on it
      put = db.put(key, value) as Promise<unknown> as Promise<void>
    } catch (err) {
      // the encoder rejected the value before anything was queued
      this.failed(err)
      return rejected(err)
    }
    put.then(undefined, this.failed)
    if (++this.writes % TRIM_EVERY === 0) this.trim().then(undefined, this.failed)
    return put
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
    const start = this.keys.oldest()!
    for (const { key, value } of this.db.getRange({ reverse: true, start, limit: limit - out.length + 1 })) {
      if (key[0] === start[0] && key[1] === start[1]) continue
      out.push(value)
      if (out.length >= limit) break
    }
    return out
  }

  /** The newest `limit` committed entries read from LMDB, newest first (memory without LMDB). */
  stored(limit: number): T[] {
    if (this.db === undefined) return this.values.newest(limit)
    const out: T[] = []
    for (const { value } of this.db.getRange({ reverse: true, limit })) out.push(value)
    return out
  }

  private async trim(): Promise<void> {
    const db = this.db!
    const excess = entryCount(db) - this.retention
    if (excess <= 0) return
    await db.transaction(() => {
      for (const key of db.getKeys({ limit: excess })) db.remove(key)
    })
  }
}

const DONE: Promise<void> = Promise.resolve()

/** A rejection already reported: callers that ignore it must not turn it into an unhandled one. */
function rejected(err: unknown): Promise<void> {
  const p = Promise.reject(err)
  p.catch(() => {})
  return p
}
