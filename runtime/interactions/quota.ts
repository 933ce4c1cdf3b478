import { PlatformError, type CounterAnswer, type SharedCounters } from '../contracts/index.js'
import { INTERACTION_ERRORS } from './errors.js'

export interface QuotaLimits {
  /** Runs one principal may have in flight at once (0: no limit). */
  runsInFlight: number
  /** Request bytes one principal may send per minute, sustained (0: no limit); a minute's worth at once. */
  bytesPerMinute: number
}

/** What a refused request was over, and the seconds to wait. */
export interface QuotaRefusal {
  over: string
  waitSeconds: number
}

// the counters' names: `#` keeps them apart from every policy's (`rate-limit:<name>`, ...)
const RUNS = '#interactions:runs-in-flight'
const BYTES = '#interactions:request-bytes'
const NOTHING = (): void => {}

/**
 * What one principal may make the store keep: runs in flight (slots), and request bytes as a
 * token budget (a minute's worth at once, refilled continuously). Counted on the platform's shared
 * counters: in this process on one node, in Redis across every node of a cluster, so a principal's
 * quota holds whichever nodes its requests reach. A principal over either is refused (429 with
 * Retry-After); other principals are untouched. Counters out of reach refuse every run (503, fail
 * closed): a quota that cannot be counted cannot be shown to hold.
 */
export class PrincipalQuota {
  constructor(
    private readonly limits: () => QuotaLimits,
    private readonly counters: () => SharedCounters
  ) {}

  /**
   * Takes a request of `bytes` from `owner`'s budget, once a run slot is seen free (a peek: the
   * run takes its slot as it starts, `holdRun`); what it is over and the seconds to wait when it
   * is refused (no bytes are taken then).
   */
  async take(owner: string, bytes: number): Promise<QuotaRefusal | undefined> {
    const { runsInFlight, bytesPerMinute } = this.limits()
    const counters = this.counters()
    if (runsInFlight > 0) {
      const s = await counted(counters.slots(RUNS, runsInFlight).acquire(owner, true))
      if (!s.acquired) return { over: `${runsInFlight} runs in flight`, waitSeconds: 1 }
    }
    if (bytesPerMinute === 0) return undefined
    // a request larger than the whole budget could never pass: the body limit is its bound
    const b = await counted(counters.budget(BYTES, bytesPerMinute, 60_000).take(owner, bytes))
    if (b.taken) return undefined
    return {
      over: `${bytesPerMinute} request bytes per minute`,
      waitSeconds: Math.max(1, Math.ceil(b.waitMs / 1000))
    }
  }

  /**
   * Holds one of `owner`'s run slots for a run about to start; the function returned gives it
   * back (once). Every slot held already: the quota's 429, nothing held.
   */
  async holdRun(owner: string): Promise<() => void> {
    const { runsInFlight } = this.limits()
    if (runsInFlight === 0) return NOTHING
    const pool = this.counters().slots(RUNS, runsInFlight)
    const s = await counted(pool.acquire(owner))
    if (!s.acquired)
      throw new PlatformError(
        INTERACTION_ERRORS.INTERACTIONS_QUOTA,
        { over: `${runsInFlight} runs in flight` },
        { headers: { 'retry-after': '1' } }
      )
    let held = true
    return () => {
      if (!held) return
      held = false
      pool.release(owner)
    }
  }
}

/** The counters' answer; counters out of reach are the quota's 503 (fail closed). */
async function counted<T>(answer: CounterAnswer<T>): Promise<T> {
  try {
    return await answer
  } catch {
    throw new PlatformError(INTERACTION_ERRORS.INTERACTIONS_QUOTA_UNCOUNTED, {}, { headers: { 'retry-after': '1' } })
  }
}
