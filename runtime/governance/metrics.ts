/** Prometheus counters of governance decisions, registered on the platform's registry. */
import { Counter } from 'prom-client'
import type { Metrics } from '../observability/index.js'

export type DecisionObserver = (policy: string, decision: string) => void

export function decisionCounter(metrics: Metrics): DecisionObserver {
  const counter = new Counter({
    name: 'platform_governance_decisions_total',
    help: 'Policy evaluations by policy and decision (admit, transform, deny, prefer, error)',
    labelNames: ['policy', 'decision'],
    registers: [metrics.registry]
  })
  // label children cached: a label lookup per evaluation would cost more than most policies
  const children = new Map<string, ReturnType<typeof counter.labels>>()
  return (policy, decision) => {
    const key = policy + '\u0000' + decision
    let c = children.get(key)
    if (c === undefined) {
      c = counter.labels(policy, decision)
      children.set(key, c)
    }
    c.inc()
  }
}
