/**
 * The journal kept in process memory, bounded: past `maxEvents` the oldest events go, so a busy
 * coordinator never grows the heap without limit. Lost on restart (the LMDB store is not).
 */
import type { JournalFilter, JournalRecord, JournalStore } from './fleet-types.js'
import { agentsOf, checkRecords, timeOf } from './journal-record.js'

interface Kept {
  at: number
  e: JournalRecord
}

function passes(k: Kept, f: JournalFilter): boolean {
  if (f.coordinationId !== undefined) return k.e.coordinationId === f.coordinationId
  return f.agent === undefined || agentsOf(k.e).includes(f.agent)
}

export class MemoryJournalStore implements JournalStore {
  readonly kind = 'memory'
  /** In journal order (time, then append order); the live ones begin at `start`. */
  private events: Kept[] = []
  // evicting moves `start`; compaction is amortised
  private start = 0
  private closed = false

  constructor(readonly maxEvents = 100_000) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new RangeError('maxEvents must be a positive integer')
  }

  append(events: JournalRecord[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('journal store is closed'))
    try {
      checkRecords(events)
    } catch (err) {
      return Promise.reject(err)
    }
    // copies, like LMDB's encoding: a caller changing its objects later changes nothing kept
    for (const e of structuredClone(events)) this.insert({ at: timeOf(e), e })
    const over = this.events.length - this.start - this.maxEvents
    if (over > 0) this.start += over
    if (this.start > this.maxEvents) {
      this.events = this.events.slice(this.start)
      this.start = 0
    }
    return Promise.resolve()
  }

  query(f: JournalFilter): Promise<JournalRecord[]> {
    const out: JournalRecord[] = []
    const from = f.until === undefined ? this.events.length : this.after(f.until)
    for (let i = from - 1; i >= this.start && out.length < f.limit; i--) {
      const k = this.events[i]!
      if (f.since !== undefined && k.at < f.since) break
      if (passes(k, f)) out.push(k.e)
    }
    return Promise.resolve(out)
  }

  coordination(id: string): Promise<JournalRecord[]> {
    const out: JournalRecord[] = []
    for (let i = this.start; i < this.events.length; i++)
      if (this.events[i]!.e.coordinationId === id) out.push(this.events[i]!.e)
    return Promise.resolve(out)
  }

  close(): Promise<void> {
    this.closed = true
    return Promise.resolve()
  }

  /** In time order; after every kept event of the same millisecond (a late stamp is rare, so usually a push). */
  private insert(k: Kept): void {
    const last = this.events[this.events.length - 1]
    if (last === undefined || last.at <= k.at) this.events.push(k)
    else this.events.splice(this.after(k.at), 0, k)
  }

  /** The first live position whose event is later than `at`. */
  private after(at: number): number {
    let lo = this.start
    let hi = this.events.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.events[mid]!.at <= at) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}
