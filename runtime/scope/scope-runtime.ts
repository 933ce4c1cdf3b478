import type { Logger } from '../observability/index.js'
import type { AiRequest } from '../contracts/index.js'
import type { Embedder, ScopeConfig } from './contract.js'
import type { DecisionModel } from './decision-model.js'
import type { ScopeMetrics } from './scope-metrics.js'

/** A scope classifier contributed by a plugin: answers a verdict directly (`classify(request, scope)`). */
export interface PluginClassifier {
  readonly name: string
  classify(request: AiRequest, scope: ScopeConfig, signal: AbortSignal): Promise<unknown>
}

/**
 * What the scope tiers need from their surroundings, looked up on every request so that a plugin
 * embedder loaded, swapped or removed at run time takes effect on the next request (and rule 1's
 * "no runtime" is decided per request).
 */
export interface ScopeRuntime {
  readonly logger: Logger
  /** The embedding runtime live now; undefined means none (embedding tiers degrade, rule 1). */
  embedder(): Embedder | undefined
  /** The LLM tier's decision model; undefined or unavailable means "no reachable model" (rule 3). */
  decisionModel(): DecisionModel | undefined
  /** A plugin classifier chosen for the LLM tier; when set it answers instead of the decision model. */
  pluginClassifier(): PluginClassifier | undefined
  /** Bound of one LLM-tier question, in milliseconds. */
  readonly decisionTimeoutMs: number
  /** Where verdicts are counted; absent outside a platform. */
  readonly metrics?: ScopeMetrics
}
