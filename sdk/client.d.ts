/**
 * Types of uws-agent-platform/client. The records the interactions routes answer with are declared here
 * once: the server (`runtime/interactions`) imports them, so what it sends and what the client reads
 * cannot drift apart.
 */

/** CREATED, then RUNNING; exactly one of the last three ends it. */
export type InteractionStatus = 'CREATED' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED'

/**
 * `input` (seq 0, only on a turn started through the OpenAI-compatible API) keeps the input items
 * the client sent, in `data.items`: what `GET /v1/responses/{id}/input_items` lists.
 */
export type StepType =
  | 'input'
  | 'text'
  | 'tool-call'
  | 'tool-result'
  | 'tool-error'
  | 'agent-step'
  | 'approval'
  | 'usage'
  | 'completion'
  | 'error'

/** Token counts of one request; `total` is input + output unless the runtime reports otherwise. */
export interface TokenUsage {
  input: number
  output: number
  cachedInput: number
  total: number
  model: string
}

/** One captured step. */
export interface InteractionStep {
  /** From 0 per interaction: the order and the resume key. */
  seq: number
  type: StepType
  text: string | null
  toolName: string | null
  /** Never null. */
  data: Record<string, unknown>
  usage: TokenUsage | null
  /** ISO-8601. */
  createdAt: string
}

/** The record the routes return, fields in wire order. */
export interface Interaction {
  id: string
  parentId: string | null
  conversationId: string
  agentId: string | null
  /** The owner; reads and writes are scoped to it. */
  userId: string
  model: string | null
  status: InteractionStatus
  background: boolean
  store: boolean
  steps: InteractionStep[]
  finalText: string | null
  usage: TokenUsage | null
  errorMessage: string | null
  createdAt: string
  updatedAt: string
}

/** The record without its steps: what a list returns. */
export type InteractionHeader = Omit<Interaction, 'steps'>

export interface CreateInteraction {
  message: string
  previousInteractionId?: string
  agentId?: string
  model?: string
  systemPrompt?: string
  metadata?: Record<string, unknown>
  background?: boolean
  store?: boolean
  /**
   * Called once at the terminal state: a signed POST of the final header (Standard Webhooks
   * headers). The URL's host must be on the server's `platform.webhooks.allowed-hosts`.
   */
  webhook?: { url: string }
}

export type ContinueInteraction = Omit<CreateInteraction, 'previousInteractionId'>

export interface WriteOptions {
  /** A retried POST with the same key and body returns the first interaction. */
  idempotencyKey?: string
}

export interface ListQuery {
  conversationId?: string
  /** 1 to 500; 50 by default. */
  limit?: number
  cursor?: string
}

export interface ListPage {
  /** Newest first. */
  items: InteractionHeader[]
  /** Absent on the last page. */
  nextCursor?: string
}

export interface StepFrame {
  type: 'interaction-step'
  step: InteractionStep
}

export interface TerminalFrame {
  type: 'interaction-terminal'
  id: string
  status: InteractionStatus
  finalText: string | null
  errorMessage: string | null
}

export type StreamFrame = StepFrame | TerminalFrame

export interface StreamOptions {
  /** Resume after this seq; -1 (the default) replays every step. */
  after?: number
  /** 'auto' (default): WebSocket, and SSE when WebSocket is missing or fails before it ever opened. */
  transport?: 'auto' | 'websocket' | 'sse'
  /** Ends the iteration. */
  signal?: AbortSignal
  /** Consecutive failed connections before the iterator throws; unbounded by default. */
  maxRetries?: number
  /** First reconnect delay in ms (doubles per consecutive failure); 50 by default. */
  retryDelayMs?: number
  /** Cap of the reconnect delay in ms; 2000 by default. */
  maxRetryDelayMs?: number
}

export interface ClientOptions {
  /** Where the platform listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string
  /** An API token or JWT, sent as `Authorization: Bearer` (and as `access_token` on a browser WebSocket). */
  token?: string
  fetch?: typeof fetch
  /** A WebSocket class; by default the global one, else the `ws` package when installed, else SSE. */
  WebSocket?: unknown
}

/** The server refused (status and `{error, code, hint}` of the platform's error catalogue). */
export declare class PlatformApiError extends Error {
  readonly status: number
  readonly code: string | undefined
  readonly hint: string | undefined
  constructor(status: number, body: unknown)
}

export declare const STREAM_PATH: '/platform/interactions-stream'

export declare class PlatformClient {
  constructor(options: ClientOptions)
  create(body: CreateInteraction, options?: WriteOptions): Promise<Interaction>
  continue(id: string, body: ContinueInteraction, options?: WriteOptions): Promise<Interaction>
  get(id: string): Promise<Interaction>
  list(query?: ListQuery): Promise<ListPage>
  /** Asks a run in flight to stop (a runtime without cancellation runs to completion). */
  cancel(id: string): Promise<{ status: string }>
  delete(id: string): Promise<void>
  /**
   * Every step after `options.after`, then the terminal frame, live; reconnects by itself and
   * resumes from the last seq it yielded, so no seq is skipped or repeated. Throws PlatformApiError
   * when the server refuses (unknown id, no access).
   */
  stream(id: string, options?: StreamOptions): AsyncGenerator<StreamFrame, void, undefined>
}
