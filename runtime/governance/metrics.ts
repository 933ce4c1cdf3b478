/** Prometheus counters of governance decisions, registered on the platform's registry. */
import { Counter } from 'prom-client'
import type { Metrics } from '../observability/index.js'

export type DecisionObserver = (policy: string, decision: string) => void

const DECISIONS = ['admit', 'transform', 'deny', 'prefer', 'error'] as const

/** Evaluations of one policy by decision (in DECISIONS' order, any other last), and how many the counter has. */
interface Tally {
  policy: string
  /** The tally observed right after this one last time: the chain runs in the same order every turn. */
  next: Tally | undefined
  counts: number[]
  reported: number[]
  /** Decisions outside DECISIONS, should a caller pass one. */
  other: Map<string, [number, number]>
}

function slot(decision: string): number {
  switch (decision) {
    case 'admit':
      return 0
    case 'transform':
      return 1
    case 'deny':
      return 2
    case 'prefer':
      return 3
    case 'error':
      return 4
    default:
      return -1
  }
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
      for (const [policy, t] of tallies) {
        for (let i = 0; i < DECISIONS.length; i++) {
          const n = t.counts[i]! - t.reported[i]!
          if (n === 0) continue
          this.labels(policy, DECISIONS[i]).inc(n)
          t.reported[i] = t.counts[i]!
        }
        for (const [decision, c] of t.other)
          if (c[0] !== c[1]) {
            this.labels(policy, decision).inc(c[0] - c[1])
            c[1] = c[0]
          }
      }
    }
  })
  let last: Tally | undefined
  return (policy, decision) => {
    // the policy after the last one observed is most often the one that came after it last time:
    // a compare of its name, not a Map lookup per evaluation
    let t = last?.next
    if (t === undefined || t.policy !== policy) {
      t = tallies.get(policy)
      if (t === undefined) {
        t = { policy, next: undefined, counts: [0, 0, 0, 0, 0], reported: [0, 0, 0, 0, 0], other: new Map() }
        tallies.set(policy, t)
      }
      if (last !== undefined) last.next = t
    }
    last = t
    const i = slot(decision)
    if (i >= 0) t.counts[i]!++
    else {
      const c = t.other.get(decision) ?? [0, 0]
      c[0]++
      t.other.set(decision, c)
    }
  }
}
