import type { PolicyDescriptor, PolicyFactory } from '../contracts/index.js'
import { createLogger } from '../observability/index.js'
import type { ScopeGuardrail, Tier } from './contract.js'
import { EmbeddingScopeGuardrail } from './embedding.js'
import { LlmClassifierScopeGuardrail } from './llm-classifier.js'
import { RuleBasedScopeGuardrail } from './rule-based.js'
import { scopeFromAgentAttributes, scopeFromPolicyConfig } from './scope-config.js'
import { ScopePolicy } from './scope-policy.js'
import type { ScopeRuntime } from './scope-runtime.js'
import { SemanticIntentScopeGuardrail } from './semantic-intent.js'
import { DEFAULT_DECISION_TIMEOUT_MS } from './decision-model.js'

/**
 * A runtime with no embedder and no decision model: embedding tiers degrade to RULE_BASED and
 * the LLM tier denies (no reachable model). Used when a caller has no platform at hand; a fresh
 * one per call (no module singleton), so pass one around to share it.
 */
export function bareScopeRuntime(): ScopeRuntime {
  return {
    logger: createLogger('warn', { destination: process.stderr, pretty: false }),
    embedder: () => undefined,
    decisionModel: () => undefined,
    pluginClassifier: () => undefined,
    decisionTimeoutMs: DEFAULT_DECISION_TIMEOUT_MS
  }
}

/** The guardrail of a tier (a fresh one per policy, so its vector cache is the policy's own). */
export function guardrailFor(tier: Tier, runtime: ScopeRuntime): ScopeGuardrail {
  switch (tier) {
    case 'RULE_BASED':
      return new RuleBasedScopeGuardrail()
    case 'EMBEDDING_SIMILARITY':
      return new EmbeddingScopeGuardrail(runtime)
    case 'SEMANTIC_INTENT':
      return new SemanticIntentScopeGuardrail(runtime)
    case 'LLM_CLASSIFIER':
      return new LlmClassifierScopeGuardrail(runtime)
  }
}

/**
 * The YAML `type: scope` factory. Config errors throw (SCOPE_CONFIG_INVALID) at load time; the policy
 * plane wraps them with the entry's name. Without a runtime argument it uses the bare runtime;
 * a platform's is `scopeRuntimeOf(platform)`.
 */
export function createScopePolicy(d: PolicyDescriptor, runtime: ScopeRuntime = bareScopeRuntime()): ScopePolicy {
  const { agent, config } = scopeFromPolicyConfig(d.config)
  return new ScopePolicy(d.name, d.source, d.version, config, agent, guardrailFor(config.tier, runtime), runtime)
}

export function scopePolicyFactory(runtime: ScopeRuntime): PolicyFactory {
  return (d) => createScopePolicy(d, runtime)
}

/**
 * The scope an agent declares with SDK `agent({scope})` (the `@AgentScope` attributes and
 * defaults), as a policy named `scope::<agent>` with source `annotation:<agent>`; null when the
 * agent declares no scope. Attribute errors throw SCOPE_CONFIG_INVALID.
 */
export function scopePolicyForAgent(
  agent: { name: string; version?: string; scope?: unknown },
  runtime: ScopeRuntime = bareScopeRuntime()
): ScopePolicy | null {
  if (agent.scope === undefined || agent.scope === null) return null
  const config = scopeFromAgentAttributes(agent.scope, agent.name)
  return new ScopePolicy(
    `scope::${agent.name}`,
    `annotation:${agent.name}`,
    agent.version ?? '1.0',
    config,
    agent.name,
    guardrailFor(config.tier, runtime),
    runtime
  )
}
