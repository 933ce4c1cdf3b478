import type { Platform } from '../platform.js'
import type { GovernancePolicy, PolicyContext, PolicyDecision } from '../contracts/index.js'
import { scopePolicyForAgent } from './factory.js'
import type { ScopeRuntime } from './scope-runtime.js'

/**
 * The scope policy of every agent plugins contribute (`agent({scope})`),
 * for the AI pipeline to put in front of that agent's turns. Rebuilt when plugins change; an
 * agent whose scope did not change keeps its policy (and its vector cache). An agent whose scope
 * attributes are invalid gets a policy that denies its turns: a broken declaration never leaves
 * the agent unconfined.
 */
export class AgentScopes {
  private byAgent = new Map<string, { key: string; policy: GovernancePolicy }>()
  private stale = true

  constructor(
    private readonly platform: Platform,
    private readonly runtime: ScopeRuntime
  ) {
    platform.bus.on('PluginsChanged', () => {
      this.stale = true
    })
  }

  /** The agent's scope policy; null when the agent is unknown or declares no scope. */
  of(agent: string): GovernancePolicy | null {
    if (this.stale) this.rebuild()
    return this.byAgent.get(agent)?.policy ?? null
  }

  all(): GovernancePolicy[] {
    if (this.stale) this.rebuild()
    return [...this.byAgent.values()].map((e) => e.policy)
  }

  private rebuild(): void {
    this.stale = false
    const next = new Map<string, { key: string; policy: GovernancePolicy }>()
    for (const a of this.platform.plugins.agents()) {
      if (a.scope === undefined || a.scope === null) continue
      const key = `${a.plugin}\u0000${a.version}\u0000${JSON.stringify(a.scope)}`
      const old = this.byAgent.get(a.name)
      if (old !== undefined && old.key === key) {
        next.set(a.name, old)
        continue
      }
      let policy: GovernancePolicy
      try {
        policy = scopePolicyForAgent(a, this.runtime)!
      } catch (err) {
        this.runtime.logger.error(
          { agent: a.name, plugin: a.plugin, err: (err as Error).message },
          'agent scope is invalid: its turns are denied'
        )
        policy = new InvalidScopePolicy(a.name, a.version, (err as Error).message)
      }
      next.set(a.name, { key, policy })
    }
    this.byAgent = next
  }
}

/** Stands in for an agent scope that could not be built: denies that agent's turns (fail closed). */
class InvalidScopePolicy implements GovernancePolicy {
  readonly className = 'ScopePolicy'
  readonly name: string
  readonly source: string
  private readonly denial: PolicyDecision

  constructor(
    readonly agent: string,
    readonly version: string,
    error: string
  ) {
    this.name = `scope::${agent}`
    this.source = `annotation:${agent}`
    this.denial = Object.freeze({ decision: 'deny', reason: `scope check failed: ${error}` })
  }

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (
      ctx.phase !== 'PRE_ADMISSION' ||
      ctx.request.agentId !== this.agent ||
      ctx.request.metadata?.action === 'call_tool'
    )
      return { decision: 'admit' }
    return this.denial
  }
}
