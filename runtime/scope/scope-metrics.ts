import { Counter, Histogram, type Registry } from 'prom-client'
import type { Tier } from './contract.js'

/**
 * Scope verdicts in `/metrics`, with the similarity of each embedding decision:
 * `platform_scope_decisions_total{policy,tier,decision}` and, for the embedding tiers,
 * `platform_scope_similarity{tier}`.
 */
export class ScopeMetrics {
  private readonly decisions: Counter<'policy' | 'tier' | 'decision'>
  private readonly similarity: Histogram<'tier'>

  constructor(registry: Registry) {
    const registers = [registry]
    this.decisions = new Counter({
      name: 'platform_scope_decisions_total',
      help: 'Scope policy decisions by policy, tier and decision (admit, transform, deny; error means an ERROR verdict denied)',
      labelNames: ['policy', 'tier', 'decision'],
      registers
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
    const children = new Map<string, { inc: () => void }>()
    const sim = this.similarity.labels(tier)
    return (decision, similarity) => {
      let c = children.get(decision)
      if (c === undefined) children.set(decision, (c = this.decisions.labels(policy, tier, decision)))
      c.inc()
      if (Number.isFinite(similarity)) sim.observe(similarity)
    }
  }
}
