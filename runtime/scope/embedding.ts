import type { AiRequest } from '../contracts/index.js'
import type { Embedder, ScopeConfig, ScopeGuardrail, ScopeVerdict, Tier } from './contract.js'
import { RuleBasedScopeGuardrail, IN_SCOPE_UNSCORED, screenedText } from './rule-based.js'
import type { ScopeRuntime } from './scope-runtime.js'
import { cosineSimilarity, isVector, round4 } from './similarity.js'

/**
 * Vectors of purposes and forbidden topics, cached per string and per embedder (a swapped plugin
 * embedder starts a fresh cache, since vectors of two models never compare). Concurrent first
 * requests share one in-flight call; a failed call is not cached.
 */
export class VectorCache {
  private readonly byEmbedder = new WeakMap<Embedder, Map<string, Promise<number[]>>>()

  get(e: Embedder, text: string): Promise<number[]> {
    let m = this.byEmbedder.get(e)
    if (m === undefined) this.byEmbedder.set(e, (m = new Map()))
    let p = m.get(text)
    if (p === undefined) {
      const map = m
      p = embedOne(e, text)
      m.set(text, p)
      p.catch(() => {
        if (map.get(text) === p) map.delete(text)
      })
    }
    return p
  }
}

/** One text through an embedder, with the reply checked: a garbage reply is a failed call. */
export async function embedOne(e: Embedder, text: string): Promise<number[]> {
  const out = await e.embed([text])
  if (!Array.isArray(out) || out.length !== 1 || !isVector(out[0]))
    throw new Error(`embedder '${e.name}' returned no usable vector`)
  return out[0]
}

/**
 * EMBEDDING_SIMILARITY tier (the default): cosine similarity of the message to the purpose; a
 * forbidden topic closer to the message than the purpose wins; below the threshold is out of
 * scope. With no embedder, or when an embedding call fails, the request is screened by the
 * rule-based tier instead and a warning is logged (rule 1 of docs/scope.md).
 */
export class EmbeddingScopeGuardrail implements ScopeGuardrail {
  private readonly cache = new VectorCache()
  private readonly rules = new RuleBasedScopeGuardrail()

  constructor(private readonly runtime: ScopeRuntime) {}

  tier(): Tier {
    return 'EMBEDDING_SIMILARITY'
  }

  evaluate(request: AiRequest, scope: ScopeConfig): ScopeVerdict | Promise<ScopeVerdict> {
    const message = screenedText(request, scope)
    if (message === undefined) return IN_SCOPE_UNSCORED
    const e = this.runtime.embedder()
    if (e === undefined) {
      this.runtime.logger.warn(
        { tier: 'EMBEDDING_SIMILARITY' },
        'No embedding runtime available: the embedding scope tier degrades to RULE_BASED for this request. Set platform.ai.scope.embedder or choose tier RULE_BASED.'
      )
      return this.rules.evaluate(request, scope)
    }
    return this.screen(e, request, message, scope)
  }

  private async screen(e: Embedder, request: AiRequest, message: string, scope: ScopeConfig): Promise<ScopeVerdict> {
    let sim: number
    let msg: number[]
    let label = 'scope purpose'
    try {
      const purpose = await this.cache.get(e, scope.purpose)
      label = 'request message'
      msg = await embedOne(e, message)
      sim = cosineSimilarity(purpose, msg)
      for (const topic of scope.forbiddenTopics) {
        if (typeof topic !== 'string' || topic.trim() === '') continue
        label = `forbidden topic '${topic}'`
        const topicSim = cosineSimilarity(await this.cache.get(e, topic.toLowerCase()), msg)
        if (topicSim > sim) {
          return {
            outcome: 'OUT_OF_SCOPE',
            reason: `message is closer to forbidden topic '${topic}' (sim=${round4(topicSim)}) than to purpose (sim=${round4(sim)})`,
            similarity: sim
          }
        }
      }
    } catch (err) {
      this.runtime.logger.warn(
        { tier: 'EMBEDDING_SIMILARITY', embedder: e.name, err: (err as Error).message },
        `Embedding failed for ${label}: the embedding scope tier degrades to RULE_BASED for this request`
      )
      return this.rules.evaluate(request, scope)
    }
    if (sim < scope.similarityThreshold) {
      return {
        outcome: 'OUT_OF_SCOPE',
        reason: `message similarity ${round4(sim)} below threshold ${round4(scope.similarityThreshold)}`,
        similarity: sim
      }
    }
    return { outcome: 'IN_SCOPE', reason: '', similarity: sim }
  }
}
