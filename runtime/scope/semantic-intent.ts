import type { AiRequest } from '../contracts/index.js'
import type { Embedder, ScopeConfig, ScopeGuardrail, ScopeVerdict, Tier } from './contract.js'
import { VectorCache, embedOne } from './embedding.js'
import { RuleBasedScopeGuardrail, IN_SCOPE_UNSCORED, screenedText } from './rule-based.js'
import type { ScopeRuntime } from './scope-runtime.js'
import { cosineSimilarity, round4 } from './similarity.js'
import { booleanSystemProperty, SEMANTIC_FAIL_OPEN_PROPERTY } from './system-properties.js'

/** Required lead of the purpose similarity over the best forbidden-topic similarity. */
export const DEFAULT_MARGIN = 0.05

/**
 * SEMANTIC_INTENT tier: the embedding tier plus a contrastive margin. Admitted only when the
 * purpose similarity reaches the threshold AND beats every forbidden topic by at least the margin.
 *
 * Failures (rules 1, 2 and 4 of docs/scope.md):
 * - no embedder: degrade to RULE_BASED with a warning, unless fail-open (the constructor argument,
 *   else the process property `org.platform.ai.scope.semantic-intent.fail-open`, read on each such
 *   request), which admits unscreened with a warning;
 * - an embedder that fails on the purpose, the message or a forbidden topic: ERROR, which the scope
 *   policy denies. The threshold is checked before any topic is embedded.
 */
export class SemanticIntentScopeGuardrail implements ScopeGuardrail {
  private readonly cache = new VectorCache()
  private readonly rules = new RuleBasedScopeGuardrail()
  private readonly margin: number

  /** `failOpen` undefined: read the process property per request. */
  constructor(
    private readonly runtime: ScopeRuntime,
    margin = DEFAULT_MARGIN,
    private readonly failOpen?: boolean
  ) {
    if (!(margin >= 0 && margin < 1)) throw new RangeError(`margin must be in [0, 1), got: ${margin}`)
    this.margin = margin
    if (failOpen === true)
      runtime.logger.warn(
        'SemanticIntentScopeGuardrail is fail-open: with no embedding runtime every request is admitted unscreened'
      )
  }

  tier(): Tier {
    return 'SEMANTIC_INTENT'
  }

  evaluate(request: AiRequest, scope: ScopeConfig): ScopeVerdict | Promise<ScopeVerdict> {
    const message = screenedText(request, scope)
    if (message === undefined) return IN_SCOPE_UNSCORED
    const e = this.runtime.embedder()
    if (e === undefined) {
      if (this.failOpen ?? booleanSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY)) {
        this.runtime.logger.warn(
          { tier: 'SEMANTIC_INTENT' },
          'No embedding runtime available: the semantic-intent scope tier admits the request unscreened (fail-open mode)'
        )
        return {
          outcome: 'IN_SCOPE',
          reason: 'fail-open: no embedding runtime for the semantic-intent scope tier',
          similarity: Number.NaN
        }
      }
      this.runtime.logger.warn(
        { tier: 'SEMANTIC_INTENT' },
        'No embedding runtime available: the semantic-intent scope tier degrades to RULE_BASED for this request. Set platform.ai.scope.embedder or choose tier RULE_BASED.'
      )
      return this.rules.evaluate(request, scope)
    }
    return this.screen(e, message, scope)
  }

  private async screen(e: Embedder, message: string, scope: ScopeConfig): Promise<ScopeVerdict> {
    let purpose: number[]
    let msg: number[]
    try {
      purpose = await this.cache.get(e, scope.purpose)
    } catch (err) {
      return this.failed(e, 'purpose', err)
    }
    try {
      msg = await embedOne(e, message)
    } catch (err) {
      return this.failed(e, 'request message', err)
    }
    const sim = cosineSimilarity(purpose, msg)
    if (sim < scope.similarityThreshold) {
      return {
        outcome: 'OUT_OF_SCOPE',
        reason: `message similarity ${round4(sim)} below threshold ${round4(scope.similarityThreshold)}`,
        similarity: sim
      }
    }
    let best = -1
    let bestTopic: string | null = null
    for (const topic of scope.forbiddenTopics) {
      if (typeof topic !== 'string' || topic.trim() === '') continue
      let v: number[]
      try {
        v = await this.cache.get(e, topic.toLowerCase())
      } catch (err) {
        return this.failed(e, `forbidden topic '${topic}'`, err)
      }
      const s = cosineSimilarity(v, msg)
      if (bestTopic === null || s > best) {
        best = s
        bestTopic = topic
      }
    }
    if (bestTopic !== null && sim - best < this.margin) {
      return {
        outcome: 'OUT_OF_SCOPE',
        reason: `semantic-intent margin violated: purpose sim ${round4(sim)} only beats forbidden topic '${bestTopic}' (sim=${round4(best)}) by ${round4(sim - best)}, below margin ${round4(this.margin)}`,
        similarity: sim
      }
    }
    return { outcome: 'IN_SCOPE', reason: '', similarity: sim }
  }

  private failed(e: Embedder, what: string, err: unknown): ScopeVerdict {
    this.runtime.logger.error(
      { tier: 'SEMANTIC_INTENT', embedder: e.name, err: (err as Error)?.message },
      `Embedding failed for ${what}`
    )
    return { outcome: 'ERROR', reason: `failed to embed ${what}`, similarity: Number.NaN }
  }
}
