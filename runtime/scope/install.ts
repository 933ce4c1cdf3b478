import type { Area, Platform } from '../platform.js'
import { CONFIG_ERRORS, type ConfigKeyOf } from '../config/index.js'
import type { RegisteredClassifier, RegisteredEmbedder } from '../plugins/index.js'
import { PlatformError, type AiRequest } from '../contracts/index.js'
import type { Embedder, ScopeConfig } from './contract.js'
import { SCOPE_ERRORS } from './errors.js'
import type { DecisionModel } from './decision-model.js'
import { LexicalEmbedder } from './lexical-embedder.js'
import { OpenAiEmbedder, embedderError } from './openai-embedder.js'
import { OpenAiDecisionModel } from './openai-decision-model.js'
import type { PluginClassifier, ScopeRuntime } from './scope-runtime.js'
import { withDeadline } from './deadline.js'
import { ScopeMetrics } from './scope-metrics.js'
import { AgentScopes } from './agent-scopes.js'
import { SCOPE, type ScopeService } from './key.js'
import { SCOPE_CONFIG_KEYS } from './config-keys.js'

/**
 * Builds the platform's scope runtime from configuration and the plugin registry and provides it
 * under SCOPE, before governance, so that its `scope` policy type (and agent scopes) are built
 * over it. A misconfigured built-in adapter stops start-up; a plugin embedder or classifier that
 * is not loaded is looked up again on every request.
 */
export async function installScope(platform: Platform): Promise<ScopeRuntime> {
  const runtime = scopeRuntimeFromConfig(platform)
  const service: ScopeService = { runtime, agents: new AgentScopes(platform, runtime) }
  platform.provide(SCOPE, service)
  return runtime
}

export const scopeArea: Area = {
  name: 'scope',
  dependsOn: [],
  configKeys: SCOPE_CONFIG_KEYS,
  errors: SCOPE_ERRORS,
  install: async (p) => {
    await installScope(p)
  }
}

function scopeRuntimeFromConfig(platform: Platform): ScopeRuntime {
  const cfg = platform.config
  const embedderName = cfg.get('platform.ai.scope.embedder')
  const embedTimeout = cfg.get('platform.ai.scope.embeddings.timeout-ms')
  const classifierName = cfg.get('platform.ai.scope.classifier')
  const chatTimeout = cfg.get('platform.ai.scope.chat.timeout-ms')

  let embedder: () => Embedder | undefined
  if (embedderName === 'none') embedder = () => undefined
  else if (embedderName === 'lexical') {
    const e = new LexicalEmbedder()
    embedder = () => e
  } else if (embedderName === 'openai') {
    const e = new OpenAiEmbedder({
      baseUrl: need(platform, 'platform.ai.scope.embeddings.base-url', 'openai'),
      model: need(platform, 'platform.ai.scope.embeddings.model', 'openai'),
      apiKey: cfg.get('platform.ai.scope.embeddings.api-key'),
      timeoutMs: embedTimeout
    })
    embedder = () => e
  } else
    embedder = pluginLookup(
      platform,
      () => platform.plugins.embedders(),
      embedderName,
      (r) => pluginEmbedder(r, embedTimeout)
    )

  // classifier 'none': no model, so the LLM tier denies (docs/scope.md)
  let decisionModel: () => DecisionModel | undefined = () => undefined
  let pluginClassifier: () => PluginClassifier | undefined = () => undefined
  if (classifierName === 'openai') {
    const m = new OpenAiDecisionModel(
      {
        baseUrl: need(platform, 'platform.ai.scope.chat.base-url', 'openai'),
        model: need(platform, 'platform.ai.scope.chat.model', 'openai'),
        apiKey: cfg.get('platform.ai.scope.chat.api-key'),
        timeoutMs: chatTimeout
      },
      cfg.get('platform.ai.scope.chat.max-concurrency')
    )
    decisionModel = () => m
  } else if (classifierName !== 'none') {
    pluginClassifier = pluginLookup(platform, () => platform.plugins.classifiers(), classifierName, pluginClassifierOf)
  }

  return {
    logger: platform.logger,
    embedder,
    decisionModel,
    pluginClassifier,
    decisionTimeoutMs: chatTimeout,
    metrics: new ScopeMetrics(platform.metrics.registry)
  }
}

function need(platform: Platform, key: ConfigKeyOf<string>, what: string): string {
  const v = platform.config.get(key)
  if (v === undefined || v === '')
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `${key} is required when the scope ${key.includes('embeddings') ? 'embedder' : 'classifier'} is '${what}'`
    })
  return v
}

/**
 * A plugin contribution found by name, cached until the plugin set changes (a swapped plugin
 * gets a fresh adapter, hence a fresh vector cache).
 */
function pluginLookup<R extends { name: string }, T>(
  platform: Platform,
  list: () => R[],
  name: string,
  adapt: (r: R) => T
): () => T | undefined {
  let cached: T | undefined
  let stale = true
  platform.bus.on('PluginsChanged', () => {
    stale = true
  })
  return () => {
    if (stale) {
      const r = list().find((x) => x.name === name)
      cached = r === undefined ? undefined : adapt(r)
      stale = false
    }
    return cached
  }
}

function pluginEmbedder(r: RegisteredEmbedder, timeoutMs: number): Embedder {
  const name = `plugin:${r.plugin}/${r.name}`
  return {
    name,
    async embed(texts: string[]): Promise<number[][]> {
      try {
        const signal = AbortSignal.timeout(timeoutMs)
        const out = await withDeadline(r.embed(texts, { signal }), signal, `embedder '${name}'`)
        // a plugin may answer typed arrays (Float32Array survives the sandbox copy); the tiers want plain arrays
        return Array.isArray(out)
          ? out.map((v: unknown) =>
              ArrayBuffer.isView(v) && !(v instanceof DataView)
                ? Array.from(v as unknown as ArrayLike<number>)
                : (v as number[])
            )
          : out
      } catch (err) {
        throw embedderError(name, 'error', (err as Error)?.message ?? String(err))
      }
    }
  }
}

function pluginClassifierOf(r: RegisteredClassifier): PluginClassifier {
  return {
    name: `${r.plugin}/${r.name}`,
    classify: async (request: AiRequest, scope: ScopeConfig, signal: AbortSignal) =>
      await withDeadline(r.classify(request, scope, { signal }), signal, `classifier '${r.name}'`)
  }
}
