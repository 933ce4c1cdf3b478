/**
 * The chain's policies as the gate reads them on every evaluation: objects of one shape. The
 * policies themselves are of a dozen classes, so each read of `agent`, `name`, `source`,
 * `version` or `evaluate` off one was a megamorphic lookup (V8's stub cache), five per evaluation.
 */
import { types } from 'node:util'
import type { GovernancePolicy, PolicyContext, PolicyDecision } from '../contracts/index.js'

const IDENTITY = ['name', 'source', 'version', 'agent', 'evaluate'] as const

/**
 * One policy, its identity and its `evaluate`. The contract's identity fields are readonly, so
 * they and the method are read once, when the chain changes; a policy that answers any of them
 * through an accessor (a wrapper reporting its delegate's, such as a dry run or a swappable
 * slot) or a proxy is read again at every evaluation (`live`).
 */
export class PolicySlot {
  name: string
  source: string
  version: string
  agent: string | null | undefined
  evaluate: (this: GovernancePolicy, ctx: PolicyContext) => PolicyDecision | Promise<PolicyDecision>
  readonly live: boolean

  constructor(readonly policy: GovernancePolicy) {
    this.live = types.isProxy(policy) || IDENTITY.some((k) => isAccessor(policy, k))
    this.name = policy.name
    this.source = policy.source
    this.version = policy.version
    this.agent = policy.agent
    this.evaluate = policy.evaluate
  }

  /** Reads a live policy's identity again (its delegate may have changed). */
  refresh(): void {
    const p = this.policy
    this.name = p.name
    this.source = p.source
    this.version = p.version
    this.agent = p.agent
    this.evaluate = p.evaluate
  }
}

/** Whether `key` is found on `o` or its prototypes as a getter or setter. */
function isAccessor(o: object, key: string): boolean {
  for (let at: object | null = o; at !== null; at = Object.getPrototypeOf(at) as object | null) {
    const d = Object.getOwnPropertyDescriptor(at, key)
    if (d !== undefined) return d.get !== undefined || d.set !== undefined
  }
  return false
}

/** The slots of the chain's current list, made again only when the list is another one. */
export class ChainSlots {
  private list: readonly GovernancePolicy[] | undefined
  private slots: readonly PolicySlot[] = []

  of(policies: readonly GovernancePolicy[]): readonly PolicySlot[] {
    if (policies !== this.list) {
      this.slots = policies.map((p) => new PolicySlot(p))
      this.list = policies
    }
    return this.slots
  }
}
