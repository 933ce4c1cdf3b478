import type { Platform } from '../platform.js'
import { ConfigError, type ConfigKeyOf } from '../config/index.js'
import type { RegisteredClassifier, RegisteredEmbedder } from '../plugins/index.js'
import type { AiRequest } from '../governance/contract.js'
import type { Embedder, ScopeConfig } from './contract.js'
import type { DecisionModel } from './decision-model.js'
import { LexicalEmbedder } from './lexical-embedder.js'
import { OpenAiEmbedder, EmbedderError } from './openai-embedder.js'
import { OpenAiDecisionModel } from './openai-decision-model.js'
import type { PluginClassifier, ScopeRuntime } from './scope-runtime.js'
import { withDeadline } from './deadline.js'
import { ScopeMetrics } from './scope-metrics.js'
import { setDefaultScopeRuntime } from './factory.js'
import { AgentScopes } from './agent-scopes.js'

/** Where the platform's scope runtime lives in the framework property bag. */
export const SCOPE_RUNTIME_PROPERTY = 'org.platform.ai.scope.runtime'
/**
 * Where the AI area may put the decision model over the resolved agent runtime (the spec's
 * default for the LLM tier). Read per request when `platform.ai.scope.classifier` is `none`.
 */
export const DECISION_MODEL_PROPERTY = 'org.platform.ai.scope.decision-model'

/**
 * Builds the platform's scope runtime from configuration and the plugin registry, and keeps it
 * under `org.platform.ai.scope.runtime`. Runs before governance so that its `scope` policy type
 * (and agent scopes) are built over it. A misconfigured built-in adapter stops start-up; a plugin
 * embedder or classifier that is not loaded is looked up again on every request.
 */
export async function installScope (platform: Platform): Promise<ScopeRuntime> {
  const rt = scopeRuntimeOf(platform)
  agentScopesOf(platform)
  setDefaultScopeRuntime(rt)
  platform.onClose(() => { setDefaultScopeRuntime(undefined, rt) })
  return rt
}

/** Where the agents' scope policies live in the property bag. */
export const AGENT_SCOPES_PROPERTY = 'org.platform.ai.scope.agents'

/** The scope policies of the platform's plugin agents (what the AI pipeline puts before an agent's turns). */
export function agentScopesOf (platform: Platform): AgentScopes {
  let a = platform.properties.get(AGENT_SCOPES_PROPERTY) as AgentScopes | undefined
  if (a === undefined) platform.properties.set(AGENT_SCOPES_PROPERTY, a = new AgentScopes(platform, scopeRuntimeOf(platform)))
  return a
}

/** The runtime `installScope` built for this platform, building it on first use. */
export function scopeRuntimeOf (platform: Platform): ScopeRuntime {
  const r = platform.properties.get(SCOPE_RUNTIME_PROPERTY) as ScopeRuntime | undefined
  if (r !== undefined) return r
  const built = scopeRuntimeFromConfig(platform)
  platform.properties.set(SCOPE_RUNTIME_PROPERTY, built)
  return built
}

function scopeRuntimeFromConfig (platform: Platform): ScopeRuntime {
  const cfg = platform.config
  const embedderName = cfg.get('platform.ai.scope.embedder')
  const embedTimeout = cfg.get('platform.ai.scope.embeddings.timeout-ms')
  const classifierName = cfg.get('platform.ai.scope.classifier')
  const chatTimeout = cfg.get('platform.ai.scope.chat.timeout-ms')

  let embedder: () => Embedder | undefined
  if (embedderName === 'none') embedder = () => undefined
  else if (embedderName === 'lexical') { const e = new LexicalEmbedder(); embedder = () => e }
  else if (embedderName === 'openai') {
    const e = new OpenAiEmbedder({ baseUrl: need(platform, 'platform.ai.scope.embeddings.base-url', 'openai'), model: need(platform, 'platform.ai.scope.embeddings.model', 'openai'), apiKey: cfg.get('platform.ai.scope.embeddings.api-key'), timeoutMs: embedTimeout })
    embedder = () => e
  } else embedder = pluginLookup(platform, () => platform.plugins.embedders(), embedderName, (r) => pluginEmbedder(r, embedTimeout))

  let decisionModel: () => DecisionModel | undefined = () => platform.properties.get(DECISION_MODEL_PROPERTY) as DecisionModel | undefined
  let pluginClassifier: () => PluginClassifier | undefined = () => undefined
  if (classifierName === 'openai') {
    const m = new OpenAiDecisionModel({ baseUrl: need(platform, 'platform.ai.scope.chat.base-url', 'openai'), model: need(platform, 'platform.ai.scope.chat.model', 'openai'), apiKey: cfg.get('platform.ai.scope.chat.api-key'), timeoutMs: chatTimeout }, cfg.get('platform.ai.scope.chat.max-concurrency'))
    decisionModel = () => m
  } else if (classifierName !== 'none') {
    decisionModel = () => undefined
    pluginClassifier = pluginLookup(platform, () => platform.plugins.classifiers(), classifierName, pluginClassifierOf)
  }

  return { logger: platform.logger, embedder, decisionModel, pluginClassifier, decisionTimeoutMs: chatTimeout, metrics: new ScopeMetrics(platform.metrics.registry) }
}

function need (platform: Platform, key: ConfigKeyOf<string>, what: string): string {
  const v = platform.config.get(key)
  if (v === undefined || v === '') throw new ConfigError(`${key} is required when the scope ${key.includes('embeddings') ? 'embedder' : 'classifier'} is '${what}'`)
  return v
}

/**
 * A plugin contribution found by name, cached until the plugin set changes (a swapped plugin
 * gets a fresh adapter, hence a fresh vector cache).
 */
function pluginLookup<R extends { name: string }, T> (platform: Platform, list: () => R[], name: string, adapt: (r: R) => T): () => T | undefined {
  let cached: T | undefined
  let stale = true
  platform.bus.on('PluginsChanged', () => { stale = true })
  return () => {
    if (stale) {
      const r = list().find((x) => x.name === name)
      cached = r === undefined ? undefined : adapt(r)
      stale = false
    }
    return cached
  }
}

function pluginEmbedder (r: RegisteredEmbedder, timeoutMs: number): Embedder {
  const name = `plugin:${r.plugin}/${r.name}`
  return {
    name,
    async embed (texts: string[]): Promise<number[][]> {
      try {
        const signal = AbortSignal.timeout(timeoutMs)
        const out = await withDeadline(r.embed(texts, { signal }), signal, `embedder '${name}'`)
        // a plugin may answer typed arrays (Float32Array survives the sandbox copy); the tiers want plain arrays
        return Array.isArray(out) ? out.map((v: unknown) => ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v as unknown as ArrayLike<number>) : v as number[]) : out
      } catch (err) {
        throw new EmbedderError(name, 'error', (err as Error)?.message ?? String(err))
      }
    }
  }
}

function pluginClassifierOf (r: RegisteredClassifier): PluginClassifier {
  return {
    name: `${r.plugin}/${r.name}`,
    classify: async (request: AiRequest, scope: ScopeConfig, signal: AbortSignal) => await withDeadline(r.classify(request, scope, { signal }), signal, `classifier '${r.name}'`)
  }
}
