/**
 * What every JournalStore agrees on about a record: its instant, the agent names the `agent`
 * filter matches, and what an append refuses. Journal order is the events' time, then append
 * order within one millisecond; the dispatcher stamps events as it appends them, so the two agree.
 */
import type { JournalRecord } from './fleet-types.js'

/** The fields whose value is an agent name, all matched by the `agent` filter. */
export const AGENT_FIELDS = ['agentName', 'fromAgent', 'toAgent', 'inputAgent', 'selectedAgent'] as const

/** The distinct agent names an event is about. */
export function agentsOf(e: JournalRecord): string[] {
  const out: string[] = []
  for (const f of AGENT_FIELDS) {
    const v = e[f]
    if (typeof v === 'string' && !out.includes(v)) out.push(v)
  }
  return out
}

/** Epoch ms of the event's timestamp. */
export function timeOf(e: JournalRecord): number {
  return Date.parse(e.timestamp)
}

/**
 * Throws a TypeError naming the first event without what every event has, so such a batch is
 * refused whole before anything is written. Agent names are not checked: a coordinator may call
 * any name, and its odd call must not cost the journal the other events of the batch.
 */
export function checkRecords(events: readonly JournalRecord[]): void {
  if (!Array.isArray(events)) throw new TypeError('journal append takes an array of events')
  // the events of a batch mostly share one timestamp: parsed once
  let valid: string | undefined
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e === null || typeof e !== 'object') throw new TypeError(`journal event ${i} is not an object`)
    if (typeof e.eventId !== 'string' || e.eventId === '') throw new TypeError(`journal event ${i} has no eventId`)
    if (typeof e.type !== 'string' || e.type === '') throw new TypeError(`journal event ${e.eventId} has no type`)
    if (e.parentEventId !== null && typeof e.parentEventId !== 'string')
      throw new TypeError(`journal event ${e.eventId}: parentEventId must be a string or null`)
    if (typeof e.coordinationId !== 'string' || e.coordinationId === '')
      throw new TypeError(`journal event ${e.eventId} has no coordinationId`)
    if (typeof e.timestamp !== 'string' || (e.timestamp !== valid && Number.isNaN(Date.parse(e.timestamp))))
      throw new TypeError(`journal event ${e.eventId} has an invalid timestamp: ${String(e.timestamp)}`)
    valid = e.timestamp
  }
}
