import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { isIdempotencyKey } from './store-input.js'
import {
  TERMINAL_STATUSES,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type Interaction,
  type InteractionStore
} from './types.js'
import { INTERACTION_ERRORS } from './errors.js'

/** A first request's answer, or a retry's. */
export interface Keyed {
  interaction: Interaction
  /** True when an earlier request with this key ran the interaction. */
  replayed: boolean
}

export interface IdempotencyOptions {
  /** Where keys outlive the process: saved with the interaction they started. */
  store: InteractionStore
  /** The interaction as its owner reads it now; undefined once deleted. */
  read: (owner: string, id: string) => Promise<Interaction | undefined>
  maxKeys: number
  ttlMs: number
  /** How long a retry waits for a synchronous first request running in another process. */
  syncWaitMs: number
  /** How often that wait reads the store. */
  pollMs?: number
  now?: () => number
}

interface Entry {
  fingerprint: string
  /** The first request's answer; settles when the first request would have answered. */
  result: Promise<Keyed>
  expiresAt: number
}

/**
 * `Idempotency-Key` per principal: a retried POST returns the first interaction instead of
 * starting a second run. The store keeps each key with the interaction it started (saved in the
 * same atomic write), so a retry after a restart, or to another process on the same database,
 * finds it. In the process, a map answers retries of first requests still in flight (they wait
 * for the first answer) and of `store: false` interactions, which the store never sees; it is
 * bounded in count (oldest first) and age.
 */
export class IdempotencyKeys {
  private readonly entries = new Map<string, Entry>()
  private readonly now: () => number

  constructor(private readonly opts: IdempotencyOptions) {
    this.now = opts.now ?? Date.now
  }

  get size(): number {
    return this.entries.size
  }

  /**
   * Runs `start` once per (principal, key): a repeat with the same fingerprint gets the first
   * interaction as it is now, a repeat with another fingerprint is 409. `start` must save the
   * interaction with the claim it is given (`saveKeyed`) and throw IDEMPOTENCY_KEY_HELD when
   * the store refuses it. A first request that fails keeps no key, so the client may retry it.
   */
  async run(
    principal: string,
    key: string,
    fingerprint: string,
    start: (claim: IdempotencyClaim) => Promise<Interaction>
  ): Promise<Keyed> {
    if (!isIdempotencyKey(key)) throw new PlatformError(INTERACTION_ERRORS.IDEMPOTENCY_KEY_INVALID)
    const id = `${principal}\u0000${key}`
    const now = this.now()
    const hit = this.entries.get(id)
    if (hit !== undefined && hit.expiresAt > now) {
      if (hit.fingerprint !== fingerprint) throw new PlatformError(INTERACTION_ERRORS.IDEMPOTENCY_KEY_REUSED)
      const first = (await hit.result).interaction
      return { interaction: (await this.opts.read(principal, first.id)) ?? first, replayed: true }
    }
    if (hit !== undefined) this.entries.delete(id)
    const claim = { key, fingerprint, expiresAt: now + this.opts.ttlMs }
    const result = this.first(principal, claim, now, start)
    const entry: Entry = { fingerprint, result, expiresAt: claim.expiresAt }
    this.entries.set(id, entry)
    const forget = () => {
      if (this.entries.get(id) === entry) this.entries.delete(id)
    }
    result.then(
      // a stored interaction's key is in the store from now on: the map holds only what it alone knows
      (r) => {
        if (r.interaction.store || r.replayed) forget()
      },
      forget
    )
    this.evict(now)
    return result
  }

  /** The store's answer for the key, else `start` with the claim; a claim lost to a racer replays the winner. */
  private async first(
    owner: string,
    claim: IdempotencyClaim,
    now: number,
    start: (claim: IdempotencyClaim) => Promise<Interaction>
  ): Promise<Keyed> {
    let held = await this.opts.store.findKey(owner, claim.key, now)
    // a held key whose interaction is deleted meanwhile is free again: a few rounds at most
    for (let round = 0; round < 3; round++) {
      if (held !== undefined) {
        if (held.fingerprint !== claim.fingerprint) throw new PlatformError(INTERACTION_ERRORS.IDEMPOTENCY_KEY_REUSED)
        const found = await this.answered(owner, held.interactionId)
        if (found !== undefined) return { interaction: found, replayed: true }
      }
      try {
        return { interaction: await start(claim), replayed: false }
      } catch (e) {
        if (!isPlatformError(e, INTERACTION_ERRORS.IDEMPOTENCY_KEY_HELD)) throw e
        held = e.params.record as IdempotencyRecord
      }
    }
    throw new Error(`Idempotency-Key ${claim.key} of ${owner} changed hands three times`)
  }

  /**
   * The interaction once its first request would have answered: a synchronous one still running
   * (in another process, or in this one before its map lost the key) is polled until it ends.
   */
  private async answered(owner: string, id: string): Promise<Interaction | undefined> {
    const until = Date.now() + this.opts.syncWaitMs
    for (;;) {
      const found = await this.opts.read(owner, id)
      if (found === undefined || found.background || TERMINAL_STATUSES.has(found.status) || Date.now() >= until)
        return found
      await sleep(this.opts.pollMs ?? 100)
    }
  }

  /** Drops expired entries from the old end, then the oldest beyond the bound. */
  private evict(now: number): void {
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.opts.maxKeys && e.expiresAt > now) break
      this.entries.delete(id)
    }
  }
}

/** The route and the body, keys sorted at every level, hashed: equal requests, equal prints. */
export function fingerprint(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\u0000').update(canonical(body)).digest('base64url')
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}
