/** How many messages a member may send: `perSecond` sustained (0: unlimited), `burst` at once. */
export interface MessageRate {
  perSecond: number
  burst: number
}

/**
 * A token bucket per member: full (`burst`) at join, refilled at `perSecond`; a message takes one
 * token. Refilled lazily on each message, so idle members cost nothing.
 */
export class MessageBucket {
  private tokens: number
  private last: number

  constructor(
    private readonly rate: MessageRate,
    now = performance.now()
  ) {
    this.tokens = rate.burst
    this.last = now
  }

  /** Takes a token; false when the member is over its rate. */
  take(now = performance.now()): boolean {
    if (this.rate.perSecond === 0) return true
    this.tokens = Math.min(this.rate.burst, this.tokens + ((now - this.last) * this.rate.perSecond) / 1000)
    this.last = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  /** Seconds until the next token (for Retry-After). */
  retryAfterSeconds(): number {
    return this.rate.perSecond === 0 ? 0 : Math.max(1, Math.ceil((1 - this.tokens) / this.rate.perSecond))
  }
}
