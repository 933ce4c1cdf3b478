/** Prometheus counters of governance decisions, registered on the platform's registry. */
import { Counter } from 'prom-client'
import type { Metrics } from '../observability/index.js'

export type DecisionObserver = (policy: string, decision: string) => void

/** Evaluations of one policy counted since start, and how many of them the counter already has. */
interface Tally {
  counts: Map<string, number>
  reported: Map<string, number>
}

/**
 * Counts in plain numbers and hands them to prom-client when the counter is read (a scrape, the
 * admin metrics): a labelled `inc()` hashes its labels on every call, which cost more per turn
 * than most policies. The counter's values are the same at every read.
 */
export function decisionCounter(metrics: Metrics): DecisionObserver {
  const tallies = new Map<string, Tally>()
  new Counter({
    name: 'platform_governance_decisions_total',
    help: 'Policy evaluations by policy and decision (admit, transform, deny, prefer, error)',
    labelNames: ['policy', 'decision'],
    registers: [metrics.registry],
    collect() {
      for (const [policy, t] of tallies)
        for (const [decision, n] of t.counts) {
          const before = t.reported.get(decision) ?? 0
          if (n === before) continue
          this.labels(policy, decision).inc(n - before)
          t.reported.set(decision, n)
        }
    }
  })
  return (policy, decision) => {
    let t = tallies.get(policy)
    if (t === undefined) {
      t = { counts: new Map(), reported: new Map() }
      tallies.set(policy, t)
    }
    t.counts.set(decision, (t.counts.get(decision) ?? 0) + 1)
  }
}
