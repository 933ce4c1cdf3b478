import { PlatformError } from '../contracts/index.js'
import type { Embedder } from './contract.js'
import { SCOPE_ERRORS } from './errors.js'
import { postJson, type OpenAiEndpoint } from './openai-http.js'
import { isVector } from './similarity.js'

/** Why an embedding call failed: the `reason` of EMBEDDER_FAILED. */
export type EmbedderFailure = 'timeout' | 'capacity' | 'error' | 'unparseable' | 'invalid'

/** A failed embedding call (EMBEDDER_FAILED): the scope tiers make it a degrade (embedding) or ERROR (semantic). */
export function embedderError(embedder: string, reason: EmbedderFailure, message: string): PlatformError {
  return new PlatformError(SCOPE_ERRORS.EMBEDDER_FAILED, { embedder, reason, detail: message })
}

/**
 * Adapter for servers speaking the OpenAI `/v1/embeddings` API (OpenAI, Ollama, vLLM, llama.cpp,
 * LM Studio, ...). A reply is accepted only when it holds exactly one finite, equally long vector
 * per input; anything else is an error, never a guess.
 */
export class OpenAiEmbedder implements Embedder {
  readonly name: string

  constructor(private readonly ep: OpenAiEndpoint) {
    this.name = `openai:${ep.model}`
  }

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return []
    const r = await postJson(this.ep, '/embeddings', { model: this.ep.model, input: texts }, this.ep.timeoutMs)
    if (!r.ok) throw embedderError(this.name, r.reason, r.detail)
    const data = (r.body as { data?: unknown } | null)?.data
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw embedderError(
        this.name,
        'invalid',
        `embeddings reply has ${Array.isArray(data) ? data.length : 'no'} vectors for ${texts.length} inputs`
      )
    }
    const out: number[][] = new Array(texts.length)
    for (let i = 0; i < data.length; i++) {
      const item = data[i] as { index?: unknown; embedding?: unknown } | null
      const at = typeof item?.index === 'number' ? item.index : i
      if (!Number.isInteger(at) || at < 0 || at >= texts.length || out[at] !== undefined)
        throw embedderError(this.name, 'invalid', `embeddings reply has a bad index ${String(item?.index)}`)
      if (!isVector(item?.embedding))
        throw embedderError(this.name, 'invalid', `embeddings reply item ${at} is not a vector of finite numbers`)
      out[at] = item.embedding
    }
    const dim = out[0]!.length
    for (const v of out)
      if (v.length !== dim) throw embedderError(this.name, 'invalid', 'embeddings reply mixes vector lengths')
    return out
  }
}
