/**
 * Per-caller counts of something a server keeps (MCP sessions, A2A tasks), so one caller cannot
 * fill a server-wide cap alone: an authenticated caller is counted by its principal (it is
 * accountable whatever address it comes from), an anonymous one by its client address. The
 * server-wide cap and the reserve kept for authenticated principals are the owner's to enforce,
 * since what makes room at the cap (ending an idle session, forgetting a finished task) is its own.
 */
import type { Context } from './context.js'
import { addressBucket } from './address-bucket.js'

/** Who holds an entry: its principal, or null and the client address for an anonymous caller. */
export interface QuotaOwner {
  principal: string | null
  address?: string
}

export interface OwnerLimits {
  /** Most entries in all. */
  max: number
  /** Most entries of one authenticated principal. */
  perPrincipal: number
  /** Most entries of anonymous callers from one client address. */
  perAddress: number
  /** Entries of `max` anonymous callers cannot take: kept for authenticated principals. */
  reserve: number
}

export type RefusalScope = 'server' | 'anonymous' | 'principal' | 'address'

/** Why an entry was refused, and the configured limit that refused it. */
export interface OwnerRefusal {
  scope: RefusalScope
  limit: number
  /** The configuration key of that limit. */
  key: string
  /** The principal or the address the limit counted (absent for the server-wide cap and the anonymous pool). */
  of?: string
}

/** The client's address; a request aborted during an async guard has no socket left to ask. */
export function clientAddress(ctx: Context): { address?: string } {
  return ctx.aborted ? {} : { address: ctx.address() }
}

/** Entries counted per principal and per anonymous client address, each O(1). */
export class OwnerQuota {
  private readonly byPrincipal = new Map<string, number>()
  private readonly byAddress = new Map<string, number>()
  private anonymousCount = 0

  constructor(
    readonly limits: OwnerLimits,
    private readonly keys: Readonly<Record<RefusalScope, string>>
  ) {}

  /** Entries anonymous callers hold now, from every address. */
  get anonymous(): number {
    return this.anonymousCount
  }

  /** Whether anonymous callers hold all of `max` but the reserve. */
  get anonymousFull(): boolean {
    return this.anonymousCount >= this.limits.max - this.limits.reserve
  }

  /** The refusal for a new entry of this owner, or undefined when it fits its own limit. */
  check(owner: QuotaOwner): OwnerRefusal | undefined {
    if (owner.principal !== null) {
      if ((this.byPrincipal.get(owner.principal) ?? 0) >= this.limits.perPrincipal)
        return this.refusal('principal', owner.principal)
    } else if (owner.address !== undefined) {
      const bucket = addressBucket(owner.address)
      if ((this.byAddress.get(bucket) ?? 0) >= this.limits.perAddress) return this.refusal('address', bucket)
    }
    return undefined
  }

  refusal(scope: RefusalScope, of?: string): OwnerRefusal {
    const l = this.limits
    const limit = {
      server: l.max,
      anonymous: Math.max(0, l.max - l.reserve),
      principal: l.perPrincipal,
      address: l.perAddress
    }[scope]
    const key = this.keys[scope]
    return of === undefined ? { scope, limit, key } : { scope, limit, key, of }
  }

  add(owner: QuotaOwner): void {
    this.bump(owner, 1)
  }
  remove(owner: QuotaOwner): void {
    this.bump(owner, -1)
  }

  private bump(owner: QuotaOwner, by: number): void {
    if (owner.principal === null) this.anonymousCount += by
    const [map, k] =
      owner.principal !== null
        ? [this.byPrincipal, owner.principal]
        : [this.byAddress, owner.address === undefined ? undefined : addressBucket(owner.address)]
    if (k === undefined) return
    const n = (map.get(k) ?? 0) + by
    if (n <= 0) map.delete(k)
    else map.set(k, n)
  }
}
