/**
 * Policies that wrap another: a swappable slot whose delegate the admin reload route replaces,
 * and a dry-run shadow that evaluates and counts but never blocks.
 */
import { admit, type GovernancePolicy, type PolicyContext, type PolicyDecision } from '../contracts/index.js'

export interface Identity {
  name: string
  version: string
  source: string
}

export const identityOf = (p: GovernancePolicy): Identity => ({ name: p.name, version: p.version, source: p.source })

/** A named slot (native YAML `swappable: true`) whose delegate can be hot-swapped. */
export class SwappablePolicy implements GovernancePolicy {
  readonly className = 'SwappablePolicy'
  readonly swappable = true
  private current: GovernancePolicy

  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    delegate: GovernancePolicy
  ) {
    this.current = delegate
  }

  get delegate(): GovernancePolicy {
    return this.current
  }

  /** The policy inside (lets the scope area find a scope policy behind the slot). */
  unwrap(): GovernancePolicy {
    return this.current
  }

  get agent(): string | null | undefined {
    return this.current.agent
  }

  /** Replaces the delegate; calls already running finish on the old one. Returns the outgoing one. */
  swap(next: GovernancePolicy): GovernancePolicy {
    const old = this.current
    this.current = next
    return old
  }

  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    return this.current.evaluate(ctx)
  }
}

export interface DryRunCounters {
  admits: number
  denies: number
  transforms: number
  errors: number
}

/** Shadow mode: the delegate's verdict is counted (and logged by the caller), the request admitted. */
export class DryRunPolicy implements GovernancePolicy {
  readonly className = 'DryRunPolicy'
  readonly dryRun = true
  readonly counters: DryRunCounters = { admits: 0, denies: 0, transforms: 0, errors: 0 }

  constructor(readonly delegate: GovernancePolicy) {}

  /** The policy inside (lets the scope area find a scope policy behind the shadow). */
  unwrap(): GovernancePolicy {
    return this.delegate
  }

  get name(): string {
    return this.delegate.name
  }
  get source(): string {
    return this.delegate.source
  }
  get version(): string {
    return this.delegate.version
  }
  get agent(): string | null | undefined {
    return this.delegate.agent
  }

  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    let d: PolicyDecision | Promise<PolicyDecision>
    try {
      d = this.delegate.evaluate(ctx)
    } catch {
      this.counters.errors++
      return ADMIT
    }
    if (d instanceof Promise)
      return d.then(
        (v) => this.count(v),
        () => {
          this.counters.errors++
          return ADMIT
        }
      )
    return this.count(d)
  }

  private count(d: PolicyDecision): PolicyDecision {
    const c = this.counters
    switch (d?.decision) {
      case 'deny':
        c.denies++
        break
      case 'transform':
        c.transforms++
        break
      case 'admit':
      case 'prefer':
        c.admits++
        break
      default:
        c.errors++
    }
    return ADMIT
  }
}

const ADMIT = admit()

/** Strips wrappers that do not change identity (swappable slots report their own identity). */
export function unwrapDryRun(p: GovernancePolicy): GovernancePolicy {
  return p instanceof DryRunPolicy ? p.delegate : p
}
