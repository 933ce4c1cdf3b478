/**
 * A retained log in two parts, so that anonymous noise can never push an authenticated entry out:
 * entries of known callers go to the main part, anonymous ones to a part of their own with the
 * same bounds. Anonymous attempts that were denied are counted, every one, and sampled: at most
 * `keptPerSecond` of them are kept, so a flood cannot even flush the anonymous entries worth
 * keeping (admitted anonymous turns). Reads merge both parts newest first, by time.
 */
import type { Database } from 'lmdb'
import { RetainedLog, type Keyed, type LogKey, type RetainedLogOptions } from './retained-log.js'
import { decodeLogCursor, encodeLogCursor } from './log-cursor.js'

/** Where an entry goes: the main part, the anonymous part, or the anonymous part if sampled. */
export type EntryKind = 'kept' | 'anonymous' | 'anonymous-denied'

/** Denied anonymous attempts kept per second by default; the rest are only counted. */
export const ANONYMOUS_DENIED_PER_SECOND = 10

export interface AnonymousPartOptions<T> {
  /** The anonymous part's own LMDB database; memory only without it. */
  db?: Database<T, LogKey> | undefined
  /** Sorts entries appended without a kind of their own (everything to the main part without it). */
  kindOf?: ((e: T) => EntryKind) | undefined
  keptPerSecond?: number | undefined
  /** Told about every denied anonymous attempt, whether it was kept (a metric counts them). */
  onDenied?: ((kept: boolean) => void) | undefined
}

/** One part of a split log: the entries of known callers, or the anonymous ones. */
export type LogPart = 'main' | 'anonymous'

/** One page of a log, newest first; `nextCursor` when older entries remain. */
export interface LogPage<T> {
  entries: T[]
  nextCursor?: string
}

/** Denied anonymous attempts since start-up: every one counted, `dropped` of them not kept. */
export interface AnonymousDeniedCounts {
  counted: number
  dropped: number
}

const DONE: Promise<void> = Promise.resolve()

/**
 * Where every kept entry also goes: a log all nodes share (PostgreSQL in cluster mode). An append
 * then resolves when the sink has it; the parts keep only the newest in memory.
 */
export interface LogSink<T> {
  append(e: T, part: LogPart): Promise<void>
  written(): Promise<void>
}

export class SplitLog<T> {
  readonly name: string
  private readonly parts: RetainedLog<T>[]
  private readonly kindOf: ((e: T) => EntryKind) | undefined
  private readonly perSecond: number
  private readonly onDenied: ((kept: boolean) => void) | undefined
  private window = 0
  private inWindow = 0
  private counted = 0
  private dropped = 0
  private readonly sink: LogSink<T> | undefined

  /** Without `anonymous` the log is one part and keeps every entry in it. */
  constructor(opts: RetainedLogOptions<T>, anonymous?: AnonymousPartOptions<T>, sink?: LogSink<T>) {
    this.name = opts.name
    this.sink = sink
    this.parts = [new RetainedLog(opts)]
    this.kindOf = anonymous?.kindOf
    this.perSecond = anonymous?.keptPerSecond ?? ANONYMOUS_DENIED_PER_SECOND
    this.onDenied = anonymous?.onDenied
    // one log to whoever counts its failed writes, whichever part failed
    if (anonymous !== undefined) this.parts.push(new RetainedLog({ ...opts, db: anonymous.db }))
  }

  get capacity(): number {
    return this.parts[0]!.capacity
  }

  /** Entries in memory, both parts. */
  get size(): number {
    return this.parts.reduce((n, p) => n + p.size, 0)
  }

  get anonymousDenied(): AnonymousDeniedCounts {
    return { counted: this.counted, dropped: this.dropped }
  }

  /**
   * Adds one entry to its part (`kind` when the caller knows it, else the log's `kindOf`); resolves
   * once it is durable (see RetainedLog.append). A one-part log keeps every entry.
   */
  append(e: T, kind: EntryKind = this.kindOf?.(e) ?? 'kept'): Promise<void> {
    if (kind === 'kept' || this.parts.length === 1) {
      const kept = this.parts[0]!.append(e)
      return this.sink === undefined ? kept : this.sink.append(e, 'main')
    }
    if (kind === 'anonymous-denied') {
      this.counted++
      const kept = this.sample()
      this.onDenied?.(kept)
      if (!kept) {
        this.dropped++
        return DONE
      }
    }
    const kept = this.parts[1]!.append(e)
    return this.sink === undefined ? kept : this.sink.append(e, 'anonymous')
  }

  /** A fixed window of one second: the first `perSecond` denied attempts in it are kept. */
  private sample(): boolean {
    const now = Math.floor(Date.now() / 1000)
    if (now !== this.window) {
      this.window = now
      this.inWindow = 0
    }
    return this.inWindow++ < this.perSecond
  }

  /** Resolves once every entry appended so far is committed, in both parts. */
  written(): Promise<void> {
    if (this.sink !== undefined) return this.sink.written()
    if (this.parts.length === 1) return this.parts[0]!.written()
    return Promise.all(this.parts.map((p) => p.written())).then(() => {})
  }

  /** The newest `limit` entries of both parts, newest first. */
  newest(limit: number): T[] {
    return this.page(limit)!.entries
  }

  /**
   * The newest `limit` entries below the cursor (from the newest without one), newest first,
   * with the cursor of the next page when older entries remain; undefined for a cursor this log
   * did not write for the same `part`. `part` reads one part alone: `main` (known callers) or
   * `anonymous`; both, merged by time, without it.
   */
  page(limit: number, cursor?: string, part?: LogPart): LogPage<T> | undefined {
    const { parts } = this
    const name = `${this.name}:${part ?? 'all'}`
    let bounds: LogKey[]
    if (cursor === undefined) bounds = parts.map((p) => p.top)
    else {
      const decoded = decodeLogCursor(cursor, name, parts.length)
      if (decoded === undefined) return undefined
      bounds = decoded
    }
    const wanted = (i: number): boolean => part === undefined || (part === 'main') === (i === 0)
    const lists: Keyed<T>[][] = parts.map((p, i) => (wanted(i) ? p.keyed(limit + 1, bounds[i]) : []))
    const at = lists.map(() => 0)
    const entries: T[] = []
    while (entries.length < limit) {
      let pick = -1
      for (let j = 0; j < lists.length; j++) {
        const e = lists[j]![at[j]!]
        if (e !== undefined && (pick < 0 || e.key[0] > lists[pick]![at[pick]!]!.key[0])) pick = j
      }
      if (pick < 0) break
      const e = lists[pick]![at[pick]!++]!
      entries.push(e.value)
      bounds[pick] = e.key
    }
    const more = lists.some((l, j) => at[j]! < l.length)
    return more ? { entries, nextCursor: encodeLogCursor(name, bounds) } : { entries }
  }

  /** The newest `limit` committed entries of each part (memory without LMDB), newest first each. */
  stored(limit: number): T[][] {
    return this.parts.map((p) => p.stored(limit))
  }
}
