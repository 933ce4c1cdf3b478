/**
 * The contract every AI runtime (demo, openai, plugin) keeps: one request in, a stream of events
 * out, ending in exactly one terminal event. The pipeline that comes later (governance, scope,
 * tools over MCP, streaming over transport) consumes only this, so runtimes stay interchangeable.
 */

import type { TokenUsage } from 'uws-agent-platform/client'

/** A tool the model may call, with its JSON schema for arguments. */
export interface AiToolSpec {
  name: string
  description?: string
  inputSchema?: Record<string, unknown>
}

/** A tool call the model asks for; `arguments` is the parsed JSON object. */
export interface AiToolCall {
  id: string
  name: string
  arguments: Record<string, unknown>
}

/** One message of the conversation so far. */
export type AiMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: AiToolCall[] }
  | { role: 'tool'; toolCallId: string; name?: string; content: string }

export interface AiRuntimeRequest {
  systemPrompt?: string
  history?: AiMessage[]
  /** The new user message; absent when the turn continues after tool results in `history`. */
  message?: string
  tools?: AiToolSpec[]
  /** Model to use; the runtime's default when absent. */
  model?: string
  /** Images (URLs or data URLs) the new user message carries; only a runtime with `image-input` is given any. */
  images?: string[]
  /** The most tokens the model may answer with; it stops with finish reason `length` there. */
  maxOutputTokens?: number
  /** The shape the answer must take; only a runtime with `structured-output` is given one. */
  responseFormat?: AiResponseFormat
}

/**
 * Structured output: any JSON object, or JSON that a schema describes (`strict`: the model must
 * keep to it exactly). The caller has checked `schema` is a JSON schema.
 */
export type AiResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean }

// Token counts of one request: on the wire in interaction records, so declared once with the client.
export type { TokenUsage }

export type AiEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: AiToolCall }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'done'; finishReason: 'stop' | 'tool-calls' | 'length' | 'cancelled' }
  | { type: 'error'; message: string; code: AiErrorCode }

export type AiErrorCode = 'timeout' | 'http' | 'protocol' | 'network' | 'cancelled' | 'capacity' | 'runtime'

export type AiCapability =
  'streaming' | 'tool-calling' | 'cancellation' | 'usage' | 'system-prompt' | 'image-input' | 'structured-output'

/**
 * What cancels a request: an AbortSignal or the platform's Cancellation (both fit this shape), so
 * the pipeline can pass the cancellation it already holds for a turn.
 */
export interface AiCancelSignal {
  readonly aborted: boolean
  addEventListener(type: 'abort', fn: () => void, opts?: { once?: boolean }): void
  removeEventListener(type: 'abort', fn: () => void): void
}

export interface AiRuntime {
  readonly name: string
  /** Higher wins when `platform.ai.runtime` is `auto`. */
  readonly priority: number
  readonly capabilities: readonly AiCapability[]
  readonly models: readonly string[]
  isAvailable(): boolean
  /**
   * Streams the events of one request. The iterator never throws: failures arrive as one
   * `error` event, and an aborted `signal` ends the stream with `done`/`cancelled` (or `error`
   * code `cancelled`) promptly, releasing what the runtime holds. With `onText`, a runtime may
   * hand its text deltas there instead of yielding `text` events (see AiTextSink); one that
   * ignores it yields them as events.
   */
  stream(request: AiRuntimeRequest, signal?: AiCancelSignal, onText?: AiTextSink): AsyncIterable<AiEvent>
}

/**
 * Where a runtime may hand its text deltas instead of yielding them: in order, each before any
 * event that follows it, and only while its stream is being read. A streamed token then costs no
 * promise, result object or resumption between the runtime and its reader. A sink that answers a
 * promise holds the next delta until it settles; what the sink throws (or rejects with) ends the
 * stream by being thrown to its reader.
 */
export type AiTextSink = (delta: string) => void | Promise<void>

/** Public description of a runtime, as the AI service lists it. */
export interface AiRuntimeInfo {
  name: string
  priority: number
  isAvailable: boolean
  capabilities: AiCapability[]
  models: string[]
}

export function usage(input: number, output: number, model: string, cachedInput = 0, total?: number): TokenUsage {
  return { input, output, cachedInput, total: total ?? input + output, model }
}

export function describe(r: AiRuntime): AiRuntimeInfo {
  let available = false
  try {
    available = r.isAvailable()
  } catch {
    /* a runtime that cannot answer is not available */
  }
  return {
    name: r.name,
    priority: r.priority,
    isAvailable: available,
    capabilities: [...r.capabilities],
    models: [...r.models]
  }
}
