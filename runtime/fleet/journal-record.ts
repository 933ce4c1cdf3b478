/**
 * What every JournalStore agrees on about a record: its instant, the agent names the `agent`
 * filter matches, and what an append refuses. Journal order is the events' time, then append
 * order within one millisecond; the dispatcher stamps events as it appends them, so the two agree.
 */
import type { JournalRecord } from './fleet-types.js'

/** The fields whose value is an agent name, all matched by the `agent` filter. */
export const AGENT_FIELDS = ['agentName', 'fromAgent', 'toAgent', 'inputAgent', 'selectedAgent'] as const

/** Index keys hold these names: bounded, and without control characters that would sort oddly. */
const MAX_NAME = 256
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

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

function checkName(what: string, v: unknown): void {
  if (typeof v !== 'string' || v === '' || v.length > MAX_NAME || CONTROL.test(v))
    throw new TypeError(
      `journal event ${what} must be a non-empty string of at most ${MAX_NAME} characters without control characters`
    )
}

/**
 * Throws a TypeError naming the first event a store cannot keep, so a bad batch is refused whole
 * before anything is written.
 */
export function checkRecords(events: readonly JournalRecord[]): void {
  if (!Array.isArray(events)) throw new TypeError('journal append takes an array of events')
  for (const [i, e] of events.entries()) {
    if (e === null || typeof e !== 'object') throw new TypeError(`journal event ${i} is not an object`)
    if (typeof e.eventId !== 'string' || e.eventId === '') throw new TypeError(`journal event ${i} has no eventId`)
    if (typeof e.type !== 'string' || e.type === '') throw new TypeError(`journal event ${e.eventId} has no type`)
    if (e.parentEventId !== null && typeof e.parentEventId !== 'string')
      throw new TypeError(`journal event ${e.eventId}: parentEventId must be a string or null`)
    checkName(`${e.eventId} coordinationId`, e.coordinationId)
    if (typeof e.timestamp !== 'string' || Number.isNaN(Date.parse(e.timestamp)))
      throw new TypeError(`journal event ${e.eventId} has an invalid timestamp: ${String(e.timestamp)}`)
    for (const f of AGENT_FIELDS) if (e[f] !== undefined) checkName(`${e.eventId} ${f}`, e[f])
  }
}
