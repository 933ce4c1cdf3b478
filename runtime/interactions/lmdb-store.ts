import type { Database } from 'lmdb'
import { PlatformError } from '../contracts/index.js'
import type { Store } from '../store/index.js'
import { INTERACTION_ERRORS } from './errors.js'
import { EndedPacker, stepsOfRecord, type RecordDecoder } from './lmdb-packer.js'
import { StepGroupCommit, type StepRecord } from './lmdb-step-group.js'
import { decodeCursor, encodeCursor, sortKeyOf } from './list-cursor.js'
import {
  LOCAL_NODE,
  TERMINAL_STEP_TYPES,
  checkAfter,
  checkClaim,
  checkHeader,
  checkKeyLookup,
  checkId,
  checkQuery,
  checkStep,
  endedError,
  headerOf,
  interactionOf,
  interrupted,
  isLive,
  recordOf,
  stepOf
} from './store-input.js'
import type {
  IdempotencyClaim,
  IdempotencyRecord,
  Interaction,
  InteractionHeader,
  InteractionStep,
  InteractionStore,
  ListPage,
  ListQuery
} from './types.js'

type StepKey = [string, number]
/** `[userId, createdAt, id]` */
type OwnerKey = [string, string, string]
/** `[userId, conversationId, createdAt, id]` */
type ConversationKey = [string, string, string, string]
/** `[userId, idempotency key]` */
type IdempotencyKey = [string, string]

type LmdbStoreOptions = { node?: string; packEnded?: boolean; groupCommitMs?: number; onError?: (err: Error) => void }
const LAST_SEQ = Number.MAX_SAFE_INTEGER
// what a keyed save's transaction answers when the id names a run that has ended
const ENDED = Symbol('ended')
// createdAt is toISOString()'s form: digits sort above '0' and below '~'
const LOW = '0'
const HIGH = '~'

/**
 * Interactions in named databases of the platform's LMDB environment: headers by id, steps by
 * `[id, seq]` and, with `packEnded`, once the run has ended all in one compressed record by id
 * (written by a transaction after the one that stores its terminal step, which removes the step
 * records: see `EndedPacker`), two list indexes (owner; owner and conversation) newest last,
 * and the ids still in flight so `start()` need not scan every record; idempotency keys by
 * `[owner, key]`, and the key each interaction holds so its delete drops it. Each header write is
 * one transaction, so indexes and records never disagree, and a resolved write is committed: it
 * survives `kill -9`.
 * One store object per environment: the hot path of `appendStep` relies on seeing every append.
 */
export class LmdbInteractionStore implements InteractionStore {
  readonly kind = 'lmdb'
  private readonly headers: Database<InteractionHeader, string>
  /** A live run's steps: a record of one step, or of several keyed by the last seq they hold. */
  private readonly stepsDb: Database<StepRecord, StepKey>
  /** Decodes the step records an ended run's packed record holds. */
  private readonly decoder: RecordDecoder
  /**
   * With `packEnded`: an ended run's step records, or (stores written before) its steps in seq
   * order. A step record costs its key (the id again), LMDB's node header and a share of pages
   * that appends from many runs at once leave half full: about 1.6x the steps' JSON at rest, and
   * one compressed record a third of that or less; packing reads, removes and compresses every
   * record once more, a fifth of a streamed step's CPU, so it is the operator's choice.
   */
  private readonly packedDb: Database<InteractionStep[] | Uint8Array, string>
  private readonly byOwner: Database<true, OwnerKey>
  private readonly byConversation: Database<true, ConversationKey>
  /** Runs in flight and the node that owns each (`true`: saved before owners were recorded). */
  private readonly live: Database<string | true, string>
  /** The seq of each run's terminal step, written with it: the one-end check reads it. */
  private readonly ends: Database<number, string>
  private readonly keys: Database<IdempotencyRecord, IdempotencyKey>
  private readonly keyOf: Database<IdempotencyKey, string>
  private readonly packer: EndedPacker
  /** Whether ended runs are packed (`packEnded`); runs marked before are packed only while it is on. */
  private readonly packEnded: boolean
  /** The hot path's puts, a group per commit; every other write flushes it first. */
  private readonly group: StepGroupCommit
  /**
   * The highest seq appended so far to each interaction this store saved in flight. A higher seq
   * cannot be stored yet, so its append is a plain put (the hot path, one per captured step);
   * any other append takes the conditional path. Runs leave it when saved terminal or deleted.
   */
  private readonly tails = new Map<string, number>()
  /** Conditional appends not yet committed, per interaction: a tail read meanwhile could be low. */
  private readonly slow = new Map<string, number>()

  private readonly node: string

  /**
   * The environment belongs to the platform: `stop()` leaves it open. `node` is the owner
   * recorded on the runs this store saves in flight (default `local`); `onError` hears of a packing
   * transaction the disk refused (the runs it held stay readable and are packed after a restart);
   * `groupCommitMs`: the least time between two commits of streamed steps (StepGroupCommit).
   */
  constructor(store: Store, opts: LmdbStoreOptions = {}) {
    this.node = opts.node ?? LOCAL_NODE
    this.packEnded = opts.packEnded === true
    this.ends = store.db('interactions-ended')
    this.headers = store.db('interactions')
    // steps are many small objects of a few shapes: their key lists are stored once, not per step
    this.stepsDb = store.db('interaction-steps', { shareStructures: true })
    // lmdb-js's msgpack encoder of the database (its typings leave it out)
    this.decoder = (this.stepsDb as unknown as { decoder: RecordDecoder }).decoder
    this.packedDb = store.db('interaction-steps-ended', { compress: true, shareStructures: true })
    this.byOwner = store.db('interactions-by-owner')
    this.byConversation = store.db('interactions-by-conversation')
    this.live = store.db('interactions-live')
    this.keys = store.db('interaction-idempotency-keys')
    this.keyOf = store.db('interaction-idempotency-key-of')
    this.group = new StepGroupCommit(this.stepsDb, opts.groupCommitMs)
    this.packer = new EndedPacker(
      {
        txn: this.headers as Database<unknown, string>,
        rawSteps: store.raw('interaction-steps'),
        packed: this.packedDb,
        unpacked: store.db('interactions-unpacked'),
        ends: this.ends
      },
      opts.onError
    )
  }

  async start(): Promise<number> {
    const marked = await this.headers.transaction(() => {
      let marked = 0
      for (const { key: id, value: owner } of this.live.getRange()) {
        if (owner !== true && owner !== this.node) continue
        const h = this.headers.get(id)
        if (h === undefined || !isLive(h.status)) continue
        const { header, step } = interrupted(h, this.lastSeq(id) + 1)
        this.write(header, h)
        // an owner that died between its terminal step and header keeps that one terminal step
        if (this.ends.get(id) === undefined) this.end(id, step)
        marked++
      }
      return marked
    })
    if (this.packEnded) this.packer.resume()
    return marked
  }

  stop(): Promise<void> {
    this.group.flush()
    return this.packer.stop()
  }

  /** Resolves once every ended run is packed into its one record (tests and the bench read the layout after it). */
  idle(): Promise<void> {
    return this.packer.idle()
  }

  available(): boolean {
    return true
  }

  async save(header: InteractionHeader): Promise<void> {
    checkHeader(header)
    const h = headerOf(header)
    this.group.flush()
    this.track(h)
    const ended = await this.headers.transaction(() => {
      const old = this.headers.get(h.id)
      if (old !== undefined && !isLive(old.status)) return true
      this.write(h, old)
      return false
    })
    if (ended) {
      this.tails.delete(h.id)
      throw endedError(h.id)
    }
  }

  /** One transaction checks the key and writes it with the header: LMDB has one writer at a time. */
  async saveKeyed(
    header: InteractionHeader,
    claim: IdempotencyClaim,
    now: number
  ): Promise<IdempotencyRecord | undefined> {
    checkHeader(header)
    checkClaim(claim)
    checkKeyLookup(header.userId, claim.key, now)
    const h = headerOf(header)
    const k: IdempotencyKey = [h.userId, claim.key]
    const record = recordOf({ ...claim, userId: h.userId, interactionId: h.id })
    this.group.flush()
    this.track(h)
    const held = await this.headers.transaction(() => {
      const cur = this.keys.get(k)
      if (cur !== undefined && cur.expiresAt > now) return recordOf(cur)
      const old = this.headers.get(h.id)
      if (old !== undefined && !isLive(old.status)) return ENDED
      if (cur !== undefined) void this.keyOf.remove(cur.interactionId)
      void this.keys.put(k, record)
      void this.keyOf.put(h.id, k)
      this.write(h, old)
      return undefined
    })
    if (held === ENDED) {
      this.tails.delete(h.id)
      throw endedError(h.id)
    }
    if (held !== undefined && !this.headers.doesExist(h.id)) this.tails.delete(h.id)
    return held
  }

  async findKey(userId: string, key: string, now: number): Promise<IdempotencyRecord | undefined> {
    checkKeyLookup(userId, key, now)
    const cur = this.keys.get([userId, key])
    return cur !== undefined && cur.expiresAt > now ? recordOf(cur) : undefined
  }

  /** Before a header write: whether its appends may take the hot path (see `tails`). */
  private track(h: InteractionHeader): void {
    if (!isLive(h.status)) this.tails.delete(h.id)
    else if (!this.tails.has(h.id)) this.tails.set(h.id, this.slow.has(h.id) ? LAST_SEQ : this.lastSeq(h.id))
  }

  /**
   * Not `async`: on the hot path the group's acknowledgement is the answer (one promise for every
   * step of the group), which saves a promise and a microtask per step, a third of the step's CPU.
   */
  appendStep(id: string, step: InteractionStep): Promise<void> {
    try {
      checkStep(step)
      const tail = this.tails.get(id)
      // an id in `tails` was checked when its header was saved; a terminal step is checked always
      if (tail !== undefined && step.seq > tail && !TERMINAL_STEP_TYPES.has(step.type)) {
        this.tails.set(id, step.seq)
        return this.group.put(id, stepOf(step))
      }
      checkId(id)
      // the conditional path's transaction is ordered behind every step appended before it
      this.group.flush()
    } catch (e) {
      return Promise.reject(e as Error)
    }
    // from the terminal step on, every append of the run is ordered behind it and refused
    if (TERMINAL_STEP_TYPES.has(step.type)) this.tails.delete(id)
    return this.conditionalAppend(id, stepOf(step))
  }

  /**
   * One transaction on lmdb's writer, in order with a delete and a terminal write: no step outlives
   * its record, none follows the run's end, and a run gets one terminal step.
   */
  private async conditionalAppend(id: string, s: InteractionStep): Promise<void> {
    const terminal = TERMINAL_STEP_TYPES.has(s.type)
    this.slow.set(id, (this.slow.get(id) ?? 0) + 1)
    try {
      const outcome = await this.headers.transaction(() => {
        const h = this.headers.get(id)
        if (h === undefined) return 'unknown'
        if (this.range(id, s.seq - 1, 1)[0]?.seq === s.seq) return 'stored'
        if (!isLive(h.status) || this.ends.get(id) !== undefined) return 'ended'
        if (!terminal) {
          void this.stepsDb.put([id, s.seq], s)
          return 'stored'
        }
        this.end(id, s)
        return this.packEnded ? 'packLater' : 'stored'
      })
      if (outcome === 'unknown') throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_STORED, { id })
      if (outcome === 'ended') throw endedError(id)
      if (outcome === 'packLater') this.packer.later(id)
    } finally {
      const n = this.slow.get(id)! - 1
      if (n === 0) this.slow.delete(id)
      else this.slow.set(id, n)
    }
  }

  /**
   * Inside a transaction: stores the run's terminal step and marks the run for packing. Appends
   * issued before the terminal step are queued before this transaction on lmdb's writer, and any
   * after it is refused, so packing once it committed reads every step of the run.
   */
  private end(id: string, terminal: InteractionStep): void {
    void this.stepsDb.put([id, terminal.seq], terminal)
    void this.ends.put(id, terminal.seq)
    if (this.packEnded) this.packer.mark(id)
  }

  async load(id: string): Promise<Interaction | undefined> {
    checkId(id)
    const h = this.headers.get(id)
    return h === undefined ? undefined : interactionOf(h, this.range(id, -1))
  }

  async steps(id: string, after: number, limit?: number): Promise<InteractionStep[]> {
    checkId(id)
    checkAfter(after, limit)
    return this.range(id, after, limit)
  }

  async list(query: ListQuery): Promise<ListPage> {
    checkQuery(query)
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    const prefix = query.conversationId === undefined ? [query.userId] : [query.userId, query.conversationId]
    const index = query.conversationId === undefined ? this.byOwner : this.byConversation
    const keys = (index as Database<true, (string | number)[]>).getKeys({
      start: after === undefined ? [...prefix, HIGH] : [...prefix, ...after],
      end: [...prefix, LOW],
      exclusiveStart: after !== undefined,
      reverse: true,
      limit: query.limit + 1
    })
    const items: InteractionHeader[] = []
    let more = false
    for (const key of keys) {
      if (items.length === query.limit) {
        more = true
        break
      }
      const h = this.headers.get(key[key.length - 1] as string)
      if (h !== undefined) items.push(headerOf(h))
    }
    return more ? { items, nextCursor: encodeCursor(sortKeyOf(items.at(-1)!)) } : { items }
  }

  async delete(id: string): Promise<boolean> {
    checkId(id)
    // appends from now on take the conditional path, which the delete's transaction orders
    this.tails.delete(id)
    this.group.flush()
    return this.headers.transaction(() => {
      const h = this.headers.get(id)
      if (h === undefined) return false
      this.unindex(h)
      void this.headers.remove(id)
      void this.ends.remove(id)
      const k = this.keyOf.get(id)
      if (k !== undefined) {
        if (this.keys.get(k)?.interactionId === id) void this.keys.remove(k)
        void this.keyOf.remove(id)
      }
      for (const key of this.stepsDb.getKeys({ start: [id, 0], end: [id, LAST_SEQ], inclusiveEnd: true }))
        void this.stepsDb.remove(key)
      void this.packedDb.remove(id)
      this.packer.unmark(id)
      return true
    })
  }

  /** Inside a transaction: the header and its index entries, replacing those of `old`. */
  private write(h: InteractionHeader, old: InteractionHeader | undefined): void {
    if (old !== undefined) this.unindex(old)
    void this.headers.put(h.id, h)
    void this.byOwner.put([h.userId, h.createdAt, h.id], true)
    void this.byConversation.put([h.userId, h.conversationId, h.createdAt, h.id], true)
    if (isLive(h.status)) void this.live.put(h.id, this.node)
  }

  private unindex(h: InteractionHeader): void {
    void this.byOwner.remove([h.userId, h.createdAt, h.id])
    void this.byConversation.remove([h.userId, h.conversationId, h.createdAt, h.id])
    void this.live.remove(h.id)
  }

  private range(id: string, after: number, limit?: number): InteractionStep[] {
    const out: InteractionStep[] = []
    if (limit === 0) return out
    const packed = this.packedDb.get(id)
    if (packed !== undefined) {
      for (const x of stepsOfRecord(packed, this.decoder))
        if (x.seq > after && (limit === undefined || out.length < limit)) out.push(stepOf(x))
      return out
    }
    // a record's key is the last seq it holds: the first one read may also hold seqs up to `after`
    for (const { value } of this.stepsDb.getRange({ start: [id, after + 1], end: [id, LAST_SEQ], inclusiveEnd: true }))
      for (const x of Array.isArray(value) ? value : [value]) {
        if (x.seq <= after) continue
        out.push(stepOf(x))
        if (out.length === limit) return out
      }
    return out
  }

  private lastSeq(id: string): number {
    const packed = this.packedDb.get(id)
    if (packed !== undefined) return stepsOfRecord(packed, this.decoder).at(-1)?.seq ?? -1
    for (const { key } of this.stepsDb.getRange({ start: [id, LAST_SEQ], end: [id, -1], reverse: true, limit: 1 }))
      return key[1]
    return -1
  }
}
