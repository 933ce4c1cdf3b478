import { PlatformError } from '../contracts/index.js'
import { INTERACTION_ERRORS } from './errors.js'
import { compareDesc, decodeCursor, encodeCursor, sortKeyOf } from './list-cursor.js'
import {
  checkAfter,
  checkClaim,
  checkHeader,
  checkKeyLookup,
  checkId,
  checkQuery,
  checkStep,
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

interface Entry {
  header: InteractionHeader
  /** In seq order. */
  steps: InteractionStep[]
  /** The idempotency key this interaction holds, under `keys`. */
  key?: string
}

const keyOf = (userId: string, key: string) => `${userId}\u0000${key}`

/**
 * Interactions in the process: for tests and demos, gone when the process ends. What goes in and
 * what comes out are copies, like the durable stores' encodings, so a caller mutating its
 * objects later changes nothing kept.
 */
export class MemoryInteractionStore implements InteractionStore {
  readonly kind = 'memory'
  private readonly entries = new Map<string, Entry>()
  private readonly keys = new Map<string, IdempotencyRecord>()

  async start(): Promise<number> {
    let marked = 0
    for (const e of this.entries.values()) {
      if (!isLive(e.header.status)) continue
      const { header, step } = interrupted(e.header, (e.steps.at(-1)?.seq ?? -1) + 1)
      e.header = header
      e.steps.push(step)
      marked++
    }
    return marked
  }

  async stop(): Promise<void> {}

  available(): boolean {
    return true
  }

  async save(header: InteractionHeader): Promise<void> {
    checkHeader(header)
    this.put(header)
  }

  /** Synchronous, so a keyed save's check and write see no other call in between. */
  private put(header: InteractionHeader): void {
    const copy = structuredClone(headerOf(header))
    const e = this.entries.get(header.id)
    if (e === undefined) this.entries.set(header.id, { header: copy, steps: [] })
    else e.header = copy
  }

  async saveKeyed(
    header: InteractionHeader,
    claim: IdempotencyClaim,
    now: number
  ): Promise<IdempotencyRecord | undefined> {
    checkHeader(header)
    checkClaim(claim)
    checkKeyLookup(header.userId, claim.key, now)
    const k = keyOf(header.userId, claim.key)
    const held = this.keys.get(k)
    if (held !== undefined && held.expiresAt > now) return structuredClone(held)
    if (held !== undefined) delete this.entries.get(held.interactionId)?.key
    this.put(header)
    this.keys.set(k, recordOf({ ...claim, userId: header.userId, interactionId: header.id }))
    this.entries.get(header.id)!.key = k
    return undefined
  }

  async findKey(userId: string, key: string, now: number): Promise<IdempotencyRecord | undefined> {
    checkKeyLookup(userId, key, now)
    const held = this.keys.get(keyOf(userId, key))
    return held !== undefined && held.expiresAt > now ? structuredClone(held) : undefined
  }

  async appendStep(id: string, step: InteractionStep): Promise<void> {
    checkId(id)
    checkStep(step)
    const e = this.entries.get(id)
    if (e === undefined) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_STORED, { id })
    const at = insertionPoint(e.steps, step.seq)
    if (e.steps[at]?.seq === step.seq) return
    e.steps.splice(at, 0, structuredClone(stepOf(step)))
  }

  async load(id: string): Promise<Interaction | undefined> {
    checkId(id)
    const e = this.entries.get(id)
    return e === undefined ? undefined : structuredClone(interactionOf(e.header, e.steps))
  }

  async steps(id: string, after: number, limit?: number): Promise<InteractionStep[]> {
    checkId(id)
    checkAfter(after, limit)
    const all = this.entries.get(id)?.steps ?? []
    const from = insertionPoint(all, after + 1)
    return structuredClone(all.slice(from, limit === undefined ? undefined : from + limit))
  }

  async list(query: ListQuery): Promise<ListPage> {
    checkQuery(query)
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    const matching = [...this.entries.values()]
      .map((e) => e.header)
      .filter(
        (h) =>
          h.userId === query.userId &&
          (query.conversationId === undefined || h.conversationId === query.conversationId) &&
          (after === undefined || compareDesc(sortKeyOf(h), after) > 0)
      )
      .sort((a, b) => compareDesc(sortKeyOf(a), sortKeyOf(b)))
    const items = structuredClone(matching.slice(0, query.limit))
    return matching.length > query.limit ? { items, nextCursor: encodeCursor(sortKeyOf(items.at(-1)!)) } : { items }
  }

  async delete(id: string): Promise<boolean> {
    checkId(id)
    const e = this.entries.get(id)
    if (e?.key !== undefined) this.keys.delete(e.key)
    return this.entries.delete(id)
  }
}

/** The index of the first step whose seq is at least `seq`. */
function insertionPoint(steps: InteractionStep[], seq: number): number {
  let lo = 0
  let hi = steps.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (steps[mid]!.seq < seq) lo = mid + 1
    else hi = mid
  }
  return lo
}
