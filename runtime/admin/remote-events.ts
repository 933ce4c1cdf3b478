/**
 * The admin events one node sends the others: a batch of its own events, numbered from `f`. What
 * arrives is checked as any input is: a malformed batch or event is dropped, never streamed.
 */
import type { EventType, PlatformEvent } from '../events/index.js'

/** The backplane topic of the admin events. */
export const EVENTS_TOPIC = 'admin.events'

/** One node's events, seqs `f`, `f + 1`, ... in order. */
export interface RemoteBatch {
  f: number
  e: PlatformEvent[]
}

/** Most events one batch may carry, and the longest text field. */
const MAX_EVENTS = 10_000
const MAX_TEXT = 4096

/** The batch in `data` when it is one; an event in it that is not a stream event is undefined (its seq stays taken). */
export function remoteBatchOf(
  data: unknown,
  types: ReadonlySet<string>
): { first: number; events: (PlatformEvent | undefined)[] } | undefined {
  const b = data as Partial<RemoteBatch> | null
  if (typeof b !== 'object' || b === null || !Number.isSafeInteger(b.f) || b.f! < 1 || !Array.isArray(b.e)) return
  if (b.e.length === 0 || b.e.length > MAX_EVENTS) return
  return { first: b.f!, events: b.e.map((e) => eventOf(e, types)) }
}

/** A flat record of a stream type with its timestamp; `node` and `seq` are the receiver's to add. */
function eventOf(e: unknown, types: ReadonlySet<string>): PlatformEvent | undefined {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return undefined
  const r = e as Record<string, unknown>
  if (typeof r.type !== 'string' || !types.has(r.type) || typeof r.timestamp !== 'string') return undefined
  for (const key in r) {
    if (key === 'node' || key === 'seq') return undefined
    const v = r[key]
    if (typeof v === 'string' ? v.length > MAX_TEXT : v !== null && typeof v !== 'number' && typeof v !== 'boolean')
      return undefined
  }
  return r as unknown as PlatformEvent<EventType>
}
