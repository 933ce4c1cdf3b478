/**
 * The journal in the platform's LMDB environment: it survives restarts and `kill -9` after an
 * acknowledged append. Events are keyed `[ms, seq]` (journal order); two indexes,
 * `[coordinationId, ms, seq]` and `[agent, ms, seq]`, make every read a range over the keys it
 * answers with, so no query walks the whole journal. An append and its eviction run in one write
 * transaction, so the bound holds at every commit.
 */
import { createHash } from 'node:crypto'
import { asBinary, type Database } from 'lmdb'
import type { Store } from '../store/index.js'
import type { JournalFilter, JournalRecord, JournalStore } from './fleet-types.js'
import { agentsOf, checkRecords, timeOf } from './journal-record.js'

/** `[epoch ms, sequence]`: journal order, the sequence breaking ties within a millisecond. */
export type JournalKey = [number, number]
/** `[coordination id or agent name (see `indexed`), epoch ms, sequence]`. */
export type JournalIndexKey = [string, number, number]

const SEQ = 'seq'
/**
 * Events held, kept beside the sequence: LMDB's statistics walk its free list (about 6 µs, per
 * append); a data directory written before has none, and the first append reads the statistics.
 */
const COUNT = 'count'
/**
 * An index key's value, `true`, as the database's msgpack encodes it (0xc3), handed over already
 * encoded: four encodes per dispatch saved, the bytes stored the same.
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

export class LmdbJournalStore implements JournalStore {
  readonly kind = 'lmdb'
  private readonly events: Database<JournalRecord, JournalKey>
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
    this.events = store.db<JournalRecord, JournalKey>('journal', { shareStructures: true })
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
      // the events of a batch mostly share one timestamp string: parsed once
      let stamp = ''
      let at = 0
      for (const e of events) {
        if (e.timestamp !== stamp) {
          stamp = e.timestamp
          at = timeOf(e)
        }
        seq++
        void this.events.put([at, seq], e)
        void this.byCoordination.put([indexed(e.coordinationId), at, seq], INDEXED)
        for (const a of agentsOf(e)) void this.byAgent.put([indexed(a), at, seq], INDEXED)
      }
      void this.meta.put(SEQ, seq)
      const kept = this.meta.get(COUNT)
      // a data directory from before the count was kept: counted once, this batch included (not
      // LMDB's statistics, which also count the record of shared structures)
      const held = kept === undefined ? this.events.getCount() : kept + events.length
      void this.meta.put(COUNT, held - this.evict(held - this.maxEvents))
    })
  }

  /**
   * Inside the append's transaction: the oldest `over` events go, with their index keys. Returns
   * how many went.
   */
  private evict(over: number): number {
    if (over <= 0) return 0
    const oldest = [...this.events.getRange({ limit: over })]
    for (const { key, value } of oldest) {
      void this.events.remove(key)
      void this.byCoordination.remove([indexed(value.coordinationId), key[0], key[1]])
      for (const a of agentsOf(value)) void this.byAgent.remove([indexed(a), key[0], key[1]])
    }
    return oldest.length
  }

  query(f: JournalFilter): Promise<JournalRecord[]> {
    const hi = f.until ?? Infinity
    // `end` is exclusive: the last key of the millisecond before `since` (keys hold whole milliseconds)
    const lo = f.since === undefined ? -Infinity : Math.ceil(f.since) - 1
    const name = f.coordinationId ?? f.agent
    const out: JournalRecord[] = []
    if (name === undefined) {
      for (const { value } of this.events.getRange({
        start: [hi, Infinity],
        end: [lo, Infinity],
        reverse: true,
        limit: f.limit
      }))
        out.push(value)
      return Promise.resolve(out)
    }
    const byCoordination = f.coordinationId !== undefined
    const index = byCoordination ? this.byCoordination : this.byAgent
    const key0 = indexed(name)
    for (const key of index.getKeys({ start: [key0, hi, Infinity], end: [key0, lo, Infinity], reverse: true })) {
      if (out.length >= f.limit) break
      const e = this.events.get([key[1], key[2]])
      // a digest stands for its name: the event itself says whether it is that name's
      if (e !== undefined && (byCoordination ? e.coordinationId === name : agentsOf(e).includes(name))) out.push(e)
    }
    return Promise.resolve(out)
  }

  coordination(id: string): Promise<JournalRecord[]> {
    const out: JournalRecord[] = []
    const key0 = indexed(id)
    for (const key of this.byCoordination.getKeys({ start: [key0, -Infinity, 0], end: [key0, Infinity, Infinity] })) {
      const e = this.events.get([key[1], key[2]])
      if (e !== undefined && e.coordinationId === id) out.push(e)
    }
    return Promise.resolve(out)
  }

  /** Appends already resolved are committed; the environment itself belongs to the platform's Store. */
  close(): Promise<void> {
    this.closed = true
    return Promise.resolve()
  }
}
