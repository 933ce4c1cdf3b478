import { createHash } from 'node:crypto'
import { PlatformError } from '../http/index.js'
import type { Interaction } from './types.js'

const KEY = /^[\x21-\x7e]{1,255}$/

interface Entry {
  fingerprint: string
  /** The first request's interaction; settles when the first request would have answered. */
  result: Promise<Interaction>
  expiresAt: number
}

/**
 * Remembers which interaction each `Idempotency-Key` started, per principal, so a retried POST
 * returns the first interaction instead of starting a second run. Bounded in count (oldest
 * first) and in age; kept in the process only, so a restart forgets the keys.
 */
export class IdempotencyKeys {
  private readonly entries = new Map<string, Entry>()

  constructor(
    private readonly maxKeys: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now
  ) {}

  get size(): number {
    return this.entries.size
  }

  /**
   * Runs `start` once per (principal, key): a repeat with the same fingerprint gets the first
   * result, a repeat with another fingerprint is 409. A first request that fails forgets its key,
   * so the client may retry it.
   */
  run(principal: string, key: string, fingerprint: string, start: () => Promise<Interaction>): Promise<Interaction> {
    if (!KEY.test(key)) throw new PlatformError('IDEMPOTENCY_KEY_INVALID')
    const id = `${principal}\u0000${key}`
    const now = this.now()
    const hit = this.entries.get(id)
    if (hit !== undefined && hit.expiresAt > now) {
      if (hit.fingerprint !== fingerprint) throw new PlatformError('IDEMPOTENCY_KEY_REUSED')
      return hit.result
    }
    if (hit !== undefined) this.entries.delete(id)
    const result = start()
    const entry: Entry = { fingerprint, result, expiresAt: now + this.ttlMs }
    this.entries.set(id, entry)
    result.then(
      // a stored interaction is read back from its store on a replay: keep no copy of its steps
      (i) => {
        if (i.store) entry.result = Promise.resolve({ ...i, steps: [] })
      },
      () => {
        if (this.entries.get(id) === entry) this.entries.delete(id)
      }
    )
    this.evict(now)
    return result
  }

  /** Drops expired entries from the old end, then the oldest beyond the bound. */
  private evict(now: number): void {
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.maxKeys && e.expiresAt > now) break
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
