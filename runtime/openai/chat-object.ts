import type { Interaction, InteractionStep } from '../interactions/index.js'
import { clientCalls, deniedBy, outputText, truncated } from './response-object.js'

type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter'

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000)

/** Why the turn stopped, in Chat Completions' terms (a failed turn that no policy denied has none). */
function finishReason(i: Interaction): FinishReason | undefined {
  if (i.status === 'COMPLETED') {
    if (truncated(i.steps)) return 'length'
    return clientCalls(i).length > 0 ? 'tool_calls' : 'stop'
  }
  return deniedBy(i.steps) ? 'content_filter' : undefined
}

export function chatUsage(i: Interaction): Record<string, unknown> | null {
  if (i.usage === null) return null
  return {
    prompt_tokens: i.usage.input,
    completion_tokens: i.usage.output,
    total_tokens: i.usage.total,
    prompt_tokens_details: { cached_tokens: i.usage.cachedInput }
  }
}

const toolCall = (c: { id: string; name: string; arguments: Record<string, unknown> }) => ({
  id: c.id,
  type: 'function',
  function: { name: c.name, arguments: JSON.stringify(c.arguments) }
})

/**
 * A finished turn as a `chat.completion`; undefined when it failed for another reason than a
 * policy (the route answers that with an error). A denial is `content_filter` with no content.
 */
export function chatCompletion(i: Interaction): Record<string, unknown> | undefined {
  const finish = finishReason(i)
  if (finish === undefined) return undefined
  const calls = clientCalls(i)
  const text = finish === 'content_filter' ? '' : outputText(i)
  return {
    id: i.id,
    object: 'chat.completion',
    created: seconds(i.createdAt),
    model: i.agentId ?? i.model ?? '',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && finish !== 'stop' ? null : text,
          refusal: null,
          annotations: [],
          ...(calls.length > 0 ? { tool_calls: calls.map(toolCall) } : {})
        },
        logprobs: null,
        finish_reason: finish
      }
    ],
    usage: chatUsage(i),
    service_tier: 'default',
    system_fingerprint: null
  }
}

/** Builds the `chat.completion.chunk`s of one streamed turn from its steps. */
export class ChatChunks {
  private calls = 0

  constructor(
    private readonly start: Interaction,
    private readonly includeUsage: boolean,
    private readonly emit: (data: string) => void
  ) {}

  begin(): void {
    this.chunk({ role: 'assistant', content: '' })
  }

  step(s: InteractionStep): void {
    if (s.type === 'text' && s.text !== null && s.text !== '') this.chunk({ content: s.text })
    else if (s.type === 'tool-call' && s.data.client === true && s.toolName !== null)
      this.chunk({
        tool_calls: [
          {
            index: this.calls++,
            ...toolCall({
              id: String(s.data.id),
              name: s.toolName,
              arguments: (s.data.arguments ?? {}) as Record<string, unknown>
            })
          }
        ]
      })
  }

  /** The finish chunk, the usage chunk when asked, then `[DONE]`; an error object for a failed turn. */
  finish(final: Interaction): void {
    const finish = finishReason(final)
    if (finish === undefined)
      this.emit(
        JSON.stringify({
          error: {
            message: final.errorMessage ?? 'the turn failed',
            type: 'server_error',
            param: null,
            code: 'server_error'
          }
        })
      )
    else {
      this.chunk({}, finish)
      if (this.includeUsage) this.emit(JSON.stringify({ ...this.base(), choices: [], usage: chatUsage(final) }))
    }
    this.emit('[DONE]')
  }

  private base(): Record<string, unknown> {
    return {
      id: this.start.id,
      object: 'chat.completion.chunk',
      created: seconds(this.start.createdAt),
      model: this.start.agentId ?? this.start.model ?? '',
      service_tier: 'default',
      system_fingerprint: null
    }
  }

  private chunk(delta: Record<string, unknown>, finish: FinishReason | null = null): void {
    const body: Record<string, unknown> = {
      ...this.base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
    }
    // with include_usage every chunk but the last carries `usage: null`
    if (this.includeUsage) body.usage = null
    this.emit(JSON.stringify(body))
  }
}
