import { Counter, Histogram, type Registry } from 'prom-client'
import type { Tier } from './contract.js'

/** One policy's verdicts by decision: counted, and handed to prom-client so far. */
type Tally = Map<string, { counted: number; reported: number }>

/**
 * Scope verdicts in `/metrics`, with the similarity of each embedding decision:
 * `platform_scope_decisions_total{policy,tier,decision}` and, for the embedding tiers,
 * `platform_scope_similarity{tier}`. Verdicts are counted in plain numbers and handed to
 * prom-client when the counter is read (a scrape): a labelled child's `inc()` hashes its labels on
 * every call, which a scope pays on every turn. The counter's values are the same at every read.
 */
export class ScopeMetrics {
  private readonly similarity: Histogram<'tier'>
  /** By `policy\0tier`: a policy rebuilt under the same name keeps counting where it was. */
  private readonly tallies = new Map<string, { policy: string; tier: Tier; counts: Tally }>()

  constructor(registry: Registry) {
    const registers = [registry]
    const tallies = this.tallies
    new Counter({
      name: 'platform_scope_decisions_total',
      help: 'Scope policy decisions by policy, tier and decision (admit, transform, deny; error means an ERROR verdict denied)',
      labelNames: ['policy', 'tier', 'decision'],
      registers,
      collect() {
        for (const { policy, tier, counts } of tallies.values())
          for (const [decision, c] of counts)
            if (c.counted !== c.reported) {
              this.labels(policy, tier, decision).inc(c.counted - c.reported)
              c.reported = c.counted
            }
      }
    })
    this.similarity = new Histogram({
      name: 'platform_scope_similarity',
      help: 'Similarity of requests to their scope purpose (embedding tiers)',
      labelNames: ['tier'],
      registers,
      buckets: [0, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1]
    })
  }

  /** A bound recorder for one policy, so the hot path does no label lookups. */
  forPolicy(policy: string, tier: Tier): (decision: string, similarity: number) => void {
    const key = `${policy}\0${tier}`
    let tally = this.tallies.get(key)
    if (tally === undefined) this.tallies.set(key, (tally = { policy, tier, counts: new Map() }))
    const counts = tally.counts
    const sim = this.similarity.labels(tier)
    return (decision, similarity) => {
      const c = counts.get(decision)
      if (c === undefined) counts.set(decision, { counted: 1, reported: 0 })
      else c.counted++
      if (Number.isFinite(similarity)) sim.observe(similarity)
    }
  }
}
