/**
 * The governance plane's public door: `installGovernance(platform)` wires the policy registry
 * (built-in, plugin and scope types), the policy files, the admission gate with its decision
 * log, the MCP tool-call gate and the admin routes. Other areas reach the running service
 * through `governanceOf(platform)`.
 */
import type { Platform } from '../platform.js'
import type { AuditEntry } from './audit-entry.js'
import { POLICIES_PROPERTY } from './chain.js'
import type { GovernancePolicy } from './contract.js'
import { GovernanceDecisionLog } from './decision-log.js'
import { GovernanceMemorySink, type Lesson } from './memory-sink.js'
import { bindPluginTypes } from './plugin-types.js'
import { installRoutes } from './routes.js'
import { GovernanceService } from './service.js'
import { createToolCallGate } from './tool-gate.js'
import { decisionCounter } from './metrics.js'
import { KillSwitchPolicy } from './types/index.js'
import { scopePolicyFactory, scopePolicyForAgent, scopeRuntimeOf } from '../scope/index.js'
import { deny as denyDecision } from './contract.js'

export * from './contract.js'
export { GovernanceService, GovernanceRequestError, type ReloadResult } from './service.js'
export { PolicyFiles, type PolicyFileStatus } from './policy-files.js'
export { PolicyAdmissionGate, type Admission, type Preference, type PolicyIdentity, SPAN_NAME } from './gate.js'
export { PolicyChain, POLICIES_PROPERTY } from './chain.js'
export { PolicyRegistry, type TypeInfo } from './registry.js'
export { YamlPolicyParser, ParserRegistry, type PolicyParser } from './yaml-parser.js'
export { RulesPolicy, buildRulesPolicy } from './rules-policy.js'
export { GovernanceDecisionLog, type Subject } from './decision-log.js'
export { GovernanceMemorySink, type Lesson } from './memory-sink.js'
export { snapshotOf, type AuditEntry, type DecisionValue } from './audit-entry.js'
export { PolicyLoadError, PolicyConfigError } from './errors.js'
export { SwappablePolicy, DryRunPolicy } from './wrappers.js'
export { GuardrailAsPolicy, PolicyAsGuardrail, type AiGuardrail, type GuardrailResult } from './guardrails.js'
export { policyDigest } from './digest.js'
export { runCheck, type CheckRequest, type CheckResponse } from './check.js'
export { createToolCallGate, toolCallRequest, toolArgsPreview } from './tool-gate.js'
export { owaspMatrix, OWASP_ROWS } from './owasp.js'
export { complianceMatrix, agtVerify, COMPLIANCE } from './compliance.js'
export * from './types/index.js'

const services = new WeakMap<Platform, GovernanceService>()

/** The running governance service of a platform, if installed and enabled. */
export function governanceOf (platform: Platform): GovernanceService | undefined { return services.get(platform) }

export async function installGovernance (platform: Platform): Promise<GovernanceService | undefined> {
  const { config, logger } = platform
  const adminRoutes = config.get<boolean>('platform.admin.enabled')
  if (!config.get<boolean>('platform.ai.governance.enabled')) {
    if (adminRoutes) installRoutes(platform, undefined)
    return undefined
  }
  const log = logger.child({ area: 'governance' })
  const decisionLog = new GovernanceDecisionLog(
    config.get('platform.ai.governance.decision-log.capacity'),
    platform.store.db<AuditEntry, [number, number]>('decisions'),
    config.get('platform.ai.governance.decision-log.retention'))
  const memory = config.get<boolean>('platform.ai.governance.memory.enabled')
    ? new GovernanceMemorySink(platform.store.db<Lesson, [string, number, number]>('governance-memory'), config.get('platform.ai.governance.memory.ttl-seconds'), config.get('platform.ai.governance.memory.min-confidence'))
    : undefined
  const service = new GovernanceService({ logger: log, decisionLog, ...(memory !== undefined ? { memory } : {}) })

  // YAML `type: scope` (runtime/scope): confines one agent (config `agent`) or every request
  const scopeRuntime = scopeRuntimeOf(platform)
  service.registry.register('scope', scopePolicyFactory(scopeRuntime), { origin: 'builtin', description: 'confines an agent to its declared purpose (RULE_BASED, EMBEDDING_SIMILARITY, SEMANTIC_INTENT, LLM_CLASSIFIER)' })

  const syncPluginTypes = bindPluginTypes(service.registry, platform.plugins, log)
  // scopes agents declare (SDK `agent({scope})`) join the chain as `scope::<agent>`; a scope
  // that does not validate makes its agent deny everything rather than run unconfined
  const syncAgentScopes = (): void => {
    const scoped: GovernancePolicy[] = []
    for (const a of platform.plugins.agents()) {
      try {
        const p = scopePolicyForAgent(a, scopeRuntime)
        if (p !== null) scoped.push(p)
      } catch (err) {
        const reason = `agent '${a.name}' scope is invalid: ${(err as Error).message}`
        log.error({ agent: a.name, plugin: a.plugin }, reason)
        const d = denyDecision(reason)
        scoped.push({ name: `scope::${a.name}`, source: `annotation:${a.name}`, version: a.version ?? '1.0', className: 'InvalidScopePolicy', evaluate: (c) => c.request.agentId === a.name ? d : { decision: 'admit' } })
      }
    }
    service.setSource('plugins:agent-scopes', scoped)
  }
  platform.bus.on('PluginsChanged', () => { syncPluginTypes(); syncAgentScopes() })

  service.chain.onChange((chain) => { platform.properties.set(POLICIES_PROPERTY, chain) })
  // policies another component put in the property bag before governance started count as code
  const preset = platform.properties.get(POLICIES_PROPERTY)
  if (Array.isArray(preset)) for (const p of preset as GovernancePolicy[]) service.addPolicy(p)
  if (config.get<boolean>('platform.ai.governance.kill-switch.enabled')) service.addPolicy(new KillSwitchPolicy())
  service.files.loadAll(config.get<string[]>('platform.ai.governance.policy-files'))
  service.files.watch(config.get<number>('platform.ai.governance.watch-interval-ms'))
  platform.onClose(() => { service.files.close() })
  syncAgentScopes()
  platform.properties.set(POLICIES_PROPERTY, service.chain.policies)

  service.gate.observer = decisionCounter(platform.metrics)
  platform.toolCallGate = createToolCallGate(service.gate)
  services.set(platform, service)
  if (adminRoutes) installRoutes(platform, service)
  return service
}
