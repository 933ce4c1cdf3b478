/**
 * Per coordinator and agent: recent failures (every ref) and, for refs with `circuitBreaker`, the
 * breaker. `threshold` consecutive failures open it; after `openMs` one probe call is let
 * through (half-open); its success closes the circuit, its failure opens it again.
 */
export type CircuitState = 'CLOSED' | 'OPEN' | 'HALF_OPEN'

/** A change of state, for the journal's CircuitStateChanged. */
export interface CircuitChange {
  fromState: CircuitState
  toState: CircuitState
}

/** Failures older than this no longer count as recent. */
export const RECENT_FAILURE_WINDOW_MS = 60_000
const MAX_KEPT_FAILURES = 100

interface Entry {
  state: CircuitState
  consecutive: number
  openedAt: number
  probing: boolean
  failures: number[]
}

export class CircuitBreakers {
  private readonly entries = new Map<string, Entry>()

  constructor(
    private readonly threshold: number,
    private readonly openMs: number,
    private readonly now: () => number = Date.now
  ) {}

  private entry(coordinator: string, agent: string): Entry {
    const key = `${coordinator}\u0000${agent}`
    let e = this.entries.get(key)
    if (e === undefined) {
      e = { state: 'CLOSED', consecutive: 0, openedAt: 0, probing: false, failures: [] }
      this.entries.set(key, e)
    }
    return e
  }

  /** The state as a reader sees it now (an open circuit past its time reads half-open). */
  state(coordinator: string, agent: string): CircuitState {
    const e = this.entries.get(`${coordinator}\u0000${agent}`)
    if (e === undefined) return 'CLOSED'
    if (e.state === 'OPEN' && this.now() - e.openedAt >= this.openMs) return 'HALF_OPEN'
    return e.state
  }

  recentFailures(coordinator: string, agent: string): number {
    const e = this.entries.get(`${coordinator}\u0000${agent}`)
    if (e === undefined) return 0
    const since = this.now() - RECENT_FAILURE_WINDOW_MS
    return e.failures.filter((t) => t >= since).length
  }

  /**
   * Whether a call may go out now; `change` receives the open → half-open move when this call is
   * the probe. While a probe is out, other calls fail fast.
   */
  allow(coordinator: string, agent: string, change: (c: CircuitChange) => void): boolean {
    const e = this.entry(coordinator, agent)
    if (e.state === 'CLOSED') return true
    if (e.state === 'OPEN') {
      if (this.now() - e.openedAt < this.openMs) return false
      e.state = 'HALF_OPEN'
      e.probing = false
      change({ fromState: 'OPEN', toState: 'HALF_OPEN' })
    }
    if (e.probing) return false
    e.probing = true
    return true
  }

  /** A call let through that ended without an outcome (cancelled): a half-open circuit may probe again. */
  abandon(coordinator: string, agent: string): void {
    const e = this.entries.get(`${coordinator}\u0000${agent}`)
    if (e !== undefined) e.probing = false
  }

  /** Records a call's outcome; `breaker` false only counts the failure. */
  record(
    coordinator: string,
    agent: string,
    success: boolean,
    breaker: boolean,
    change: (c: CircuitChange) => void
  ): void {
    // a success counts nothing where there is no breaker: no entry to look up (or create)
    if (success && !breaker) return
    const e = this.entry(coordinator, agent)
    if (!success) {
      e.failures.push(this.now())
      if (e.failures.length > MAX_KEPT_FAILURES) e.failures.shift()
    }
    if (!breaker) return
    if (success) {
      e.consecutive = 0
      if (e.state !== 'CLOSED') {
        const from = e.state
        e.state = 'CLOSED'
        e.probing = false
        change({ fromState: from, toState: 'CLOSED' })
      }
      return
    }
    e.consecutive++
    if (e.state === 'HALF_OPEN' || (e.state === 'CLOSED' && e.consecutive >= this.threshold)) {
      const from = e.state
      e.state = 'OPEN'
      e.openedAt = this.now()
      e.probing = false
      change({ fromState: from, toState: 'OPEN' })
    }
  }
}
