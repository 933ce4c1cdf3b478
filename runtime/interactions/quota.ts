export interface QuotaLimits {
  /** Runs one principal may have in flight at once (0: no limit). */
  runsInFlight: number
  /** Request bytes one principal may send per minute, sustained (0: no limit); a minute's worth at once. */
  bytesPerMinute: number
}

interface Budget {
  bytes: number
  at: number
}

/** Principals whose budget is full and who run nothing are forgotten past this many. */
const KEEP = 10_000

/**
 * What one principal may make the store keep: runs in flight, and request bytes as a token bucket
 * (a minute's budget at once, refilled continuously). A principal over either is refused (429 with
 * Retry-After at the route); other principals are untouched, so one client never locks out another.
 */
export class PrincipalQuota {
  private readonly budgets = new Map<string, Budget>()
  /** When the last sweep ran: at most one a second, so a crowd of live principals costs no O(n) per request. */
  private sweptAt = -Infinity

  constructor(
    private readonly limits: () => QuotaLimits,
    private readonly inFlight: (owner: string) => number
  ) {}

  /**
   * Takes a request of `bytes` from `owner`'s budget; what it is over and the seconds to wait
   * when it is refused (nothing is taken then).
   */
  take(owner: string, bytes: number, now = performance.now()): { over: string; waitSeconds: number } | undefined {
    const { runsInFlight, bytesPerMinute } = this.limits()
    if (runsInFlight > 0 && this.inFlight(owner) >= runsInFlight)
      return { over: `${runsInFlight} runs in flight`, waitSeconds: 1 }
    if (bytesPerMinute === 0) return undefined
    // a request larger than the whole budget could never pass: the body limit is its bound
    const cost = Math.min(bytes, bytesPerMinute)
    const perMs = bytesPerMinute / 60_000
    const b = this.budgets.get(owner) ?? { bytes: bytesPerMinute, at: now }
    b.bytes = Math.min(bytesPerMinute, b.bytes + (now - b.at) * perMs)
    b.at = now
    if (b.bytes < cost) {
      this.keep(owner, b, now)
      return {
        over: `${bytesPerMinute} request bytes per minute`,
        waitSeconds: Math.max(1, Math.ceil((cost - b.bytes) / perMs / 1000))
      }
    }
    b.bytes -= cost
    this.keep(owner, b, now)
    return undefined
  }

  /** Principals whose budgets are kept now: bounded by the sweep. */
  get size(): number {
    return this.budgets.size
  }

  private keep(owner: string, b: Budget, now: number): void {
    this.budgets.set(owner, b)
    if (this.budgets.size <= KEEP || now - this.sweptAt < 1000) return
    this.sweptAt = now
    const { bytesPerMinute } = this.limits()
    for (const [k, v] of this.budgets)
      if (v.bytes + ((now - v.at) * bytesPerMinute) / 60_000 >= bytesPerMinute && this.inFlight(k) === 0)
        this.budgets.delete(k)
  }
}
