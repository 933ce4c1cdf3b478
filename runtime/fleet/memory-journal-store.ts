/**
 * The journal kept in process memory, bounded: past `maxEvents` the oldest events go, so a busy
 * coordinator never grows the heap without limit. Lost on restart (the LMDB store is not).
 */
import type { JournalFilter, JournalRecord, JournalStore } from './fleet-types.js'

/** The agent names an event is about, for the `agent` filter. */
export function agentsOf(e: JournalRecord): unknown[] {
  return [e.agentName, e.fromAgent, e.toAgent, e.inputAgent, e.selectedAgent]
}

/** True when `e` passes the filter's coordination (which wins over agent) and time bounds. */
export function matches(e: JournalRecord, f: JournalFilter): boolean {
  if (f.coordinationId !== undefined) {
    if (e.coordinationId !== f.coordinationId) return false
  } else if (f.agent !== undefined && !agentsOf(e).includes(f.agent)) return false
  if (f.since === undefined && f.until === undefined) return true
  const at = Date.parse(e.timestamp)
  return (f.since === undefined || at >= f.since) && (f.until === undefined || at <= f.until)
}

export class MemoryJournalStore implements JournalStore {
  private events: JournalRecord[] = []
  // where the live events begin in `events`: evicting moves it, compaction is amortised
  private start = 0

  constructor(private readonly maxEvents = 100_000) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new RangeError('maxEvents must be a positive integer')
  }

  append(events: JournalRecord[]): Promise<void> {
    for (const e of events) this.events.push(e)
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
    for (let i = this.events.length - 1; i >= this.start && out.length < f.limit; i--) {
      const e = this.events[i]!
      if (matches(e, f)) out.push(e)
    }
    return Promise.resolve(out)
  }

  coordination(id: string): Promise<JournalRecord[]> {
    const out: JournalRecord[] = []
    for (let i = this.start; i < this.events.length; i++)
      if (this.events[i]!.coordinationId === id) out.push(this.events[i]!)
    return Promise.resolve(out)
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}
