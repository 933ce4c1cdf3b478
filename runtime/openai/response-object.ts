import type { Interaction, InteractionStep } from '../interactions/index.js'
import type { TokenUsage } from '../ai/index.js'

/** What the request said that the interaction record does not keep: echoed by the create's answer and its stream. */
export interface ResponseEcho {
  instructions: string | null
  metadata: Record<string, string>
}

/** A retrieved response: the record keeps neither the instructions nor the metadata. */
export const NO_ECHO: ResponseEcho = { instructions: null, metadata: {} }

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
      return 'completed'
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

/** The message item of the response: absent while no text came, `incomplete` when the turn did not complete. */
function output(i: Interaction, status: ResponseStatus): MessageItem[] {
  const text = outputText(i)
  if (text === '' && status !== 'completed') return []
  const itemStatus = status === 'completed' ? 'completed' : status === 'in_progress' ? 'in_progress' : 'incomplete'
  return [messageItem(i.id, text, itemStatus)]
}

/** An interaction as an OpenAI response object: every key the Responses API defines, nullable ones null. */
export function responseObject(i: Interaction, echo: ResponseEcho): Record<string, unknown> {
  const status = responseStatus(i)
  const denied = status === 'incomplete'
  const failed = status === 'failed'
  return {
    id: i.id,
    object: 'response',
    created_at: seconds(i.createdAt),
    completed_at: status === 'completed' ? seconds(i.updatedAt) : null,
    status,
    incomplete_details: denied ? { reason: 'content_filter' } : null,
    model: i.agentId ?? i.model ?? '',
    previous_response_id: i.parentId,
    instructions: echo.instructions,
    output: output(i, status),
    error: failed ? { code: 'server_error', message: i.errorMessage ?? 'the turn failed' } : null,
    tools: [],
    tool_choice: 'auto',
    truncation: 'disabled',
    parallel_tool_calls: false,
    text: { format: { type: 'text' } },
    top_p: null,
    presence_penalty: null,
    frequency_penalty: null,
    top_logprobs: null,
    temperature: null,
    reasoning: null,
    usage: responseUsage(i.usage),
    max_output_tokens: null,
    max_tool_calls: null,
    store: i.store,
    background: i.background,
    service_tier: 'default',
    metadata: echo.metadata,
    safety_identifier: null,
    prompt_cache_key: null
  }
}
