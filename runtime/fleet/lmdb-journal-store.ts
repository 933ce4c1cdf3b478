/**
 * The journal in the platform's LMDB environment: it survives restarts and `kill -9` after an
 * acknowledged append. Events are kept in records of up to RECORD_MAX consecutive events of one
 * append sharing one timestamp, keyed `[ms, sequence of the first]` (journal order); two indexes,
 * `[coordinationId, ms, seq]` and `[agent, ms, seq]`, name each record once per coordination and
 * agent in it, so every read is a range over the keys it answers with and no query walks the
 * whole journal. An append and its eviction run in one write transaction, so the bound holds at
 * every commit. A record of one event per key, as stores before records wrote, reads the same.
 */
import { createHash } from 'node:crypto'
import { asBinary, type Database } from 'lmdb'
import type { Store } from '../store/index.js'
import type { JournalFilter, JournalRecord, JournalStore } from './fleet-types.js'
import { agentsOf, checkRecords, timeOf } from './journal-record.js'

/** `[epoch ms, sequence of its first event]`: journal order, the sequence breaking ties within a millisecond. */
export type JournalKey = [number, number]
/** `[coordination id or agent name (see `indexed`), the record's key]`. */
export type JournalIndexKey = [string, number, number]
/** A record's events in journal order; a store before records kept one event per key. */
type Stored = JournalRecord[] | JournalRecord

/**
 * Events in one record at most. Why records: each LMDB put is a B-tree descent on the main thread,
 * and a dispatch's two events (and a batch's many events of one agent) then take one index key
 * each, not one per event. Why a bound: an eviction that splits the oldest record writes the
 * rest of it again, and a small value stays within its leaf page.
 */
export const RECORD_MAX = 32

const SEQ = 'seq'
/**
 * Events held, kept beside the sequence (LMDB's statistics count records, and walk its free list
 * on every read); a data directory written before has none, and the first append counts them.
 */
const COUNT = 'count'
/**
 * An index key's value, `true`, as the database's msgpack encodes it (0xc3), handed over already
 * encoded: an encode per key saved, the bytes stored the same.
 */
const INDEXED = asBinary(Buffer.from([0xc3])) as unknown as true
/** LMDB refuses keys over 1978 bytes; a name longer than this is indexed by its digest. */
const MAX_NAME_BYTES = 1024
// the key encoding splits some strings holding control characters into several key parts
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/

/**
 * A name as the indexes hold it: itself, or the digest of one too long for a key or holding
 * control characters. A digest may equal a real name: reads check the event's own field.
 */
export function indexed(name: string): string {
  if (!CONTROL.test(name) && (name.length * 3 <= MAX_NAME_BYTES || Buffer.byteLength(name) <= MAX_NAME_BYTES))
    return name
  return `sha256:${createHash('sha256').update(name).digest('hex')}`
}

/** A stored record as events. */
function eventsOf(v: Stored): JournalRecord[] {
  return Array.isArray(v) ? v : [v]
}

/** The index names of a record's events, each once: coordinations and agents. */
function namesOf(events: readonly JournalRecord[]): { coordinations: Set<string>; agents: Set<string> } {
  const coordinations = new Set<string>()
  const agents = new Set<string>()
  for (const e of events) {
    coordinations.add(indexed(e.coordinationId))
    for (const a of agentsOf(e)) agents.add(indexed(a))
  }
  return { coordinations, agents }
}

export class LmdbJournalStore implements JournalStore {
  readonly kind = 'lmdb'
  private readonly events: Database<Stored, JournalKey>
  private readonly byCoordination: Database<true, JournalIndexKey>
  private readonly byAgent: Database<true, JournalIndexKey>
  /** The last sequence given, kept with every append so keys stay unique across restarts. */
  private readonly meta: Database<number, string>
  private closed = false

  constructor(
    store: Store,
    readonly maxEvents = 100_000
  ) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new RangeError('maxEvents must be a positive integer')
    // a few record shapes, two or more per dispatch: their keys kept once in the database, not
    // written into each value (events stored before still read)
    this.events = store.db<Stored, JournalKey>('journal', { shareStructures: true })
    this.byCoordination = store.db<true, JournalIndexKey>('journal-by-coordination')
    this.byAgent = store.db<true, JournalIndexKey>('journal-by-agent')
    this.meta = store.db<number, string>('journal-meta')
  }

  async append(events: JournalRecord[]): Promise<void> {
    if (this.closed) throw new Error('journal store is closed')
    checkRecords(events)
    if (events.length === 0) return
    await this.events.transaction(() => {
      // read in the transaction, not kept in the process: two stores on one environment never share a key
      let seq = this.meta.get(SEQ) ?? 0
      for (let i = 0; i < events.length;) {
        // a record: the next events of one timestamp string (one parse), RECORD_MAX at most
        const stamp = events[i]!.timestamp
        let j = i + 1
        while (j < events.length && j - i < RECORD_MAX && events[j]!.timestamp === stamp) j++
        const record = events.slice(i, j)
        const key: JournalKey = [timeOf(record[0]!), seq + 1]
        seq += record.length
        void this.events.put(key, record)
        const { coordinations, agents } = namesOf(record)
        for (const c of coordinations) void this.byCoordination.put([c, key[0], key[1]], INDEXED)
        for (const a of agents) void this.byAgent.put([a, key[0], key[1]], INDEXED)
        i = j
      }
      void this.meta.put(SEQ, seq)
      const kept = this.meta.get(COUNT)
      const held = kept === undefined ? this.counted() : kept + events.length
      void this.meta.put(COUNT, held - this.evict(held - this.maxEvents))
    })
  }

  /**
   * Events held, this append's included, in a data directory from before the count was kept:
   * counted once, record by record (not LMDB's statistics, which count records and the one of
   * shared structures).
   */
  private counted(): number {
    let n = 0
    for (const { value } of this.events.getRange()) n += eventsOf(value).length
    return n
  }

  /**
   * Inside the append's transaction: the oldest `over` events go, with the index keys of the
   * names no kept event of their record has. A record only partly evicted keeps the rest of its
   * events under its key. Returns how many went.
   */
  private evict(over: number): number {
    if (over <= 0) return 0
    // the oldest records holding `over` events, read before any is changed
    const oldest: { key: JournalKey; events: JournalRecord[] }[] = []
    let reached = 0
    for (const { key, value } of this.events.getRange()) {
      const events = eventsOf(value)
      oldest.push({ key, events })
      reached += events.length
      if (reached >= over) break
    }
    let gone = 0
    for (const { key, events } of oldest) {
      const take = Math.min(events.length, over - gone)
      const rest = events.slice(take)
      const left = namesOf(events.slice(0, take))
      const kept = namesOf(rest)
      for (const c of left.coordinations)
        if (!kept.coordinations.has(c)) void this.byCoordination.remove([c, key[0], key[1]])
      for (const a of left.agents) if (!kept.agents.has(a)) void this.byAgent.remove([a, key[0], key[1]])
      if (rest.length === 0) void this.events.remove(key)
      else void this.events.put(key, rest)
      gone += take
    }
    return gone
  }

  query(f: JournalFilter): Promise<JournalRecord[]> {
    const hi = f.until ?? Infinity
    // `end` is exclusive: the last key of the millisecond before `since` (keys hold whole milliseconds)
    const lo = f.since === undefined ? -Infinity : Math.ceil(f.since) - 1
    const name = f.coordinationId ?? f.agent
    const out: JournalRecord[] = []
    if (name === undefined) {
      for (const { value } of this.events.getRange({ start: [hi, Infinity], end: [lo, Infinity], reverse: true })) {
        const events = eventsOf(value)
        for (let i = events.length - 1; i >= 0 && out.length < f.limit; i--) out.push(events[i]!)
        if (out.length >= f.limit) break
      }
      return Promise.resolve(out)
    }
    const byCoordination = f.coordinationId !== undefined
    const index = byCoordination ? this.byCoordination : this.byAgent
    const key0 = indexed(name)
    for (const key of index.getKeys({ start: [key0, hi, Infinity], end: [key0, lo, Infinity], reverse: true })) {
      if (out.length >= f.limit) break
      const value = this.events.get([key[1], key[2]])
      if (value === undefined) continue
      const events = eventsOf(value)
      // a digest stands for its name: the event itself says whether it is that name's
      for (let i = events.length - 1; i >= 0 && out.length < f.limit; i--) {
        const e = events[i]!
        if (byCoordination ? e.coordinationId === name : agentsOf(e).includes(name)) out.push(e)
      }
    }
    return Promise.resolve(out)
  }

  coordination(id: string): Promise<JournalRecord[]> {
    const out: JournalRecord[] = []
    const key0 = indexed(id)
    for (const key of this.byCoordination.getKeys({ start: [key0, -Infinity, 0], end: [key0, Infinity, Infinity] })) {
      const value = this.events.get([key[1], key[2]])
      if (value === undefined) continue
      for (const e of eventsOf(value)) if (e.coordinationId === id) out.push(e)
    }
    return Promise.resolve(out)
  }

  /** Appends already resolved are committed; the environment itself belongs to the platform's Store. */
  close(): Promise<void> {
    this.closed = true
    return Promise.resolve()
  }
}
