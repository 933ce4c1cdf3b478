import type { AiMessage, AiResponseFormat, AiToolCall, TokenUsage } from '../ai/index.js'
import type { Interaction, InteractionStep } from '../interactions/index.js'
import type { StoredItem } from './response-input.js'

/** What the request said that the interaction record does not keep: echoed by the create's answer and its stream. */
export interface ResponseEcho {
  instructions: string | null
  metadata: Record<string, string>
  tools: unknown[]
  toolChoice: 'auto' | 'none'
  maxOutputTokens: number | null
}

/** A retrieved response: the record keeps neither the instructions, the metadata nor the tools. */
export const NO_ECHO: ResponseEcho = {
  instructions: null,
  metadata: {},
  tools: [],
  toolChoice: 'auto',
  maxOutputTokens: null
}

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled'

export interface OutputText {
  type: 'output_text'
  text: string
  annotations: []
  logprobs: []
}

export interface MessageItem {
  type: 'message'
  id: string
  status: 'in_progress' | 'completed' | 'incomplete'
  role: 'assistant'
  content: OutputText[]
}

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000)

export interface FunctionCallItem {
  type: 'function_call'
  id: string
  call_id: string
  name: string
  arguments: string
  status: 'in_progress' | 'completed'
}

/** The input the turn started from, as its `input` step keeps it; undefined for a turn started elsewhere. */
export function inputOf(i: Interaction):
  | {
      items: StoredItem[]
      message: string
      continuation: AiMessage[]
      /** `text.format` as the create asked (absent: plain text). */
      format: AiResponseFormat | undefined
    }
  | undefined {
  const first = i.steps[0]
  if (first?.type !== 'input') return undefined
  const d = first.data as { items?: unknown; message?: unknown; continuation?: unknown; format?: unknown }
  if (!Array.isArray(d.items) || typeof d.message !== 'string') return undefined
  return {
    items: d.items as StoredItem[],
    message: d.message,
    continuation: Array.isArray(d.continuation) ? (d.continuation as AiMessage[]) : [],
    format: typeof d.format === 'object' && d.format !== null ? (d.format as AiResponseFormat) : undefined
  }
}

/** The calls the turn handed to the client (admitted by the tool gate), in order. */
export function clientCalls(i: Interaction): AiToolCall[] {
  const out: AiToolCall[] = []
  for (const s of i.steps)
    if (s.type === 'tool-call' && s.data.client === true && s.toolName !== null)
      out.push({
        id: String(s.data.id),
        name: s.toolName,
        arguments: (s.data.arguments ?? {}) as Record<string, unknown>
      })
  return out
}

export const functionCallItem = (
  call: AiToolCall,
  status: FunctionCallItem['status'] = 'completed'
): FunctionCallItem => ({
  type: 'function_call',
  id: `fc_${call.id}`,
  call_id: call.id,
  name: call.name,
  arguments: status === 'completed' ? JSON.stringify(call.arguments) : '',
  status
})

/** Whether the model stopped at `max_output_tokens`: the response is then `incomplete`. */
export function truncated(steps: readonly InteractionStep[]): boolean {
  const last = steps.at(-1)
  return last?.type === 'completion' && last.data.truncated === true
}

/** Whether a governance policy denied the turn: the response is then `incomplete`, reason `content_filter`. */
export function deniedBy(steps: readonly InteractionStep[]): boolean {
  const last = steps.at(-1)
  return last?.type === 'error' && last.data.code === 'denied'
}

export function responseStatus(i: Interaction): ResponseStatus {
  switch (i.status) {
    case 'CREATED':
      return 'queued'
    case 'RUNNING':
      return 'in_progress'
    case 'COMPLETED':
      return truncated(i.steps) ? 'incomplete' : 'completed'
    case 'CANCELLED':
      return 'cancelled'
    case 'FAILED':
      return deniedBy(i.steps) ? 'incomplete' : 'failed'
  }
}

/** The message output item's id: one message per response, so the response id names it. */
export const messageId = (responseId: string): string => `msg_${responseId}`

/** The text the turn produced so far: its final text once completed, else its text steps. */
export function outputText(i: Interaction): string {
  if (i.finalText !== null) return i.finalText
  let text = ''
  for (const s of i.steps) if (s.type === 'text' && s.text !== null) text += s.text
  return text
}

export function messageItem(id: string, text: string, status: MessageItem['status']): MessageItem {
  return {
    type: 'message',
    id: messageId(id),
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }]
  }
}

export function responseUsage(u: TokenUsage | null): Record<string, unknown> | null {
  if (u === null) return null
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cachedInput },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.total
  }
}

/**
 * The output items: the message (absent while no text came, and when the turn only handed calls
 * to the client), then the function calls for the client.
 */
function output(i: Interaction, status: ResponseStatus): (MessageItem | FunctionCallItem)[] {
  const text = outputText(i)
  const calls = clientCalls(i).map((c) => functionCallItem(c))
  const out: (MessageItem | FunctionCallItem)[] = []
  if (text !== '' || (status === 'completed' && calls.length === 0)) {
    const itemStatus = status === 'completed' ? 'completed' : status === 'in_progress' ? 'in_progress' : 'incomplete'
    out.push(messageItem(i.id, text, itemStatus))
  }
  return [...out, ...calls]
}

/** An interaction as an OpenAI response object: every key the Responses API defines, nullable ones null. */
export function responseObject(i: Interaction, echo: ResponseEcho): Record<string, unknown> {
  const status = responseStatus(i)
  const failed = status === 'failed'
  return {
    id: i.id,
    object: 'response',
    created_at: seconds(i.createdAt),
    completed_at: status === 'completed' ? seconds(i.updatedAt) : null,
    status,
    incomplete_details:
      status !== 'incomplete' ? null : { reason: truncated(i.steps) ? 'max_output_tokens' : 'content_filter' },
    model: i.agentId ?? i.model ?? '',
    previous_response_id: i.parentId,
    instructions: echo.instructions,
    output: output(i, status),
    error: failed ? { code: 'server_error', message: i.errorMessage ?? 'the turn failed' } : null,
    tools: echo.tools,
    tool_choice: echo.toolChoice,
    truncation: 'disabled',
    parallel_tool_calls: true,
    text: { format: inputOf(i)?.format ?? { type: 'text' } },
    top_p: null,
    presence_penalty: null,
    frequency_penalty: null,
    top_logprobs: null,
    temperature: null,
    reasoning: null,
    usage: responseUsage(i.usage),
    max_output_tokens: echo.maxOutputTokens,
    max_tool_calls: null,
    store: i.store,
    background: i.background,
    service_tier: 'default',
    metadata: echo.metadata,
    safety_identifier: null,
    prompt_cache_key: null
  }
}
