/**
 * Policy types contributed by plugins (`policyType` in the SDK) become registry factories. A
 * policy built from one looks its type up at call time, so a swapped plugin serves the next call
 * and a removed one makes the policy deny (fail closed) until it returns.
 */
import type { Logger } from 'pino'
import type { PluginRegistry, RegisteredPolicyType } from '../plugins/index.js'
import type { GovernancePolicy, PolicyContext, PolicyDecision, PolicyDescriptor } from '../contracts/index.js'
import type { PolicyRegistry } from './registry.js'

export class PluginPolicy implements GovernancePolicy {
  readonly className: string
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly type: string,
    private readonly config: Record<string, unknown>,
    private readonly lookup: (type: string) => RegisteredPolicyType | undefined
  ) {
    this.className = `PluginPolicy(${type})`
  }

  async evaluate(ctx: PolicyContext): Promise<PolicyDecision> {
    const t = this.lookup(this.type)
    if (t === undefined) throw new Error(`policy type '${this.type}' is not provided by any loaded plugin`)
    // plain data crosses the sandbox boundary
    const context = { phase: ctx.phase, request: ctx.request, accumulatedResponse: ctx.accumulatedResponse }
    const d = (await t.evaluate(context, this.config)) as PolicyDecision
    if (
      d !== null &&
      typeof d === 'object' &&
      d.decision === 'transform' &&
      d.request !== null &&
      typeof d.request === 'object'
    ) {
      // a plugin may return a partial request: fill in what it left out
      const request = { ...ctx.request, ...d.request, metadata: { ...(d.request.metadata ?? ctx.request.metadata) } }
      return typeof d.reason === 'string'
        ? { decision: 'transform', request, reason: d.reason }
        : { decision: 'transform', request }
    }
    return d
  }
}

/** Keeps the registry's plugin types in step with the plugin registry; returns a resync function. */
export function bindPluginTypes(registry: PolicyRegistry, plugins: PluginRegistry, logger: Logger): () => void {
  let current = new Map<string, RegisteredPolicyType>()
  const lookup = (type: string): RegisteredPolicyType | undefined => current.get(type.toLowerCase())
  const sync = (): void => {
    const next = new Map<string, RegisteredPolicyType>()
    for (const t of plugins.policyTypes()) {
      const key = t.type.toLowerCase()
      const origin = registry.origin(key)
      if (origin === 'builtin' || (origin !== undefined && !origin.startsWith('plugin:'))) {
        logger.warn(
          { type: t.type, plugin: t.plugin },
          `plugin '${t.plugin}' policy type '${t.type}' ignored: the type is already defined by ${origin}`
        )
        continue
      }
      if (next.has(key)) {
        logger.warn(
          { type: t.type, plugin: t.plugin },
          `policy type '${t.type}' is provided by several plugins; '${next.get(key)!.plugin}' wins`
        )
        continue
      }
      next.set(key, t)
    }
    for (const key of current.keys()) if (!next.has(key)) registry.unregister(key)
    for (const [key, t] of next) {
      registry.register(
        key,
        (d: PolicyDescriptor) => new PluginPolicy(d.name, d.source, d.version, key, d.config, lookup),
        { origin: `plugin:${t.plugin}`, description: t.description }
      )
    }
    current = next
  }
  sync()
  return sync
}
