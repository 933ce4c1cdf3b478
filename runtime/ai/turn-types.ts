/** The shapes of one agent turn: its request, its events, and what it needs from the platform. */
import type { Platform } from '../platform.js'
import type { AiRequest } from '../contracts/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import type { OfferedTools } from './agent-tools.js'
import type { FeedbackOptions } from './feedback.js'
import type {
  AiCancelSignal,
  AiMessage,
  AiResponseFormat,
  AiRuntime,
  AiToolCall,
  AiToolSpec,
  TokenUsage
} from './runtime.js'

export interface TurnRequest {
  /** The agent whose system prompt, tools and model the turn uses; none: a bare turn with no tools. */
  agent?: string
  message: string
  /** Replaces the agent's system prompt (the scope preamble is still prepended). */
  systemPrompt?: string
  history?: AiMessage[]
  /** A runtime name (that runtime answers) or a model name for the active runtime; the agent's `model` when absent. */
  model?: string
  userId?: string
  sessionId?: string
  conversationId?: string
  /** Roles from the caller's credentials: they become `metadata.roles`, which the authorization policy reads. */
  roles?: readonly string[]
  /**
   * Facts the entry point itself establishes (the A2A task, the fleet dispatch, the AG-UI run):
   * they become the request's `metadata`, which policies trust. Never copy client input here.
   */
  facts?: Record<string, unknown>
  /** The client's own metadata: it reaches policies only as claims (`AiRequest.clientMetadata`). */
  clientMetadata?: Record<string, unknown>
  /**
   * Tools the client runs itself (AG-UI frontend tools), offered to the model beside the agent's
   * own (which win a name clash). A call to one is reported as `tool-start` and ends the turn: the
   * client answers it in the next turn's `continuation`.
   */
  clientTools?: AiToolSpec[]
  /**
   * The exchange after `message` that the model has not answered yet: the assistant's tool calls
   * and their results (a client tool's included). The turn goes on from there, with no new user message.
   */
  continuation?: AiMessage[]
  /** Images the message carries (URLs or data URLs): the caller checks the runtime has `image-input`. */
  images?: string[]
  /** Bounds each model answer of the turn; a turn stopped there completes marked `truncated`. */
  maxOutputTokens?: number
  /** The shape the answer must take: the caller checks the runtime has `structured-output`. */
  responseFormat?: AiResponseFormat
}

/**
 * Where a reader wants a turn's text deltas instead of as `text` events: called with each delta
 * in the order of the turn's events (every event before it was read, none after it yet), since
 * the turn only runs while its reader waits for the next event. Per streamed token that spares
 * every layer between the runtime and the reader a promise and a resumption. A sink that answers
 * a promise holds the turn until it settles: a reader paced by something slower (a store).
 */
export type TurnTextSink = (delta: string) => void | Promise<void>

/** What a counted turn reports: at its first read, per event, and once when it ends. */
export interface TurnCounter {
  started(): void
  event(e: TurnEvent): void
  ended(): void
}

export type TurnErrorCode =
  'denied' | 'cancelled' | 'runtime' | 'no-runtime' | 'unknown-agent' | 'bad-request' | 'max-tool-rounds'

export type TurnEvent =
  | { type: 'text'; delta: string }
  /** `client`: a call to one of the client's tools, admitted by the tool gate; the turn ends with it. */
  | { type: 'tool-start'; call: AiToolCall; client?: true }
  | { type: 'tool-result'; id: string; name: string; content: string }
  | { type: 'tool-error'; id: string; name: string; message: string }
  | { type: 'usage'; usage: TokenUsage }
  /** A step an agent's own run() reports with `ctx.progress({ step })`. */
  | { type: 'agent-step'; name: string; description?: string; data?: unknown }
  /** Governance guidance the final system prompt carried; sent just before `complete`, only when some was injected. */
  | { type: 'feedback'; injected: number; lines: string[] }
  | {
      type: 'complete'
      text: string
      preferences: { policy: string; preferred: string; reason: string }[]
      /** The user message as admitted (after any transform): what conversation memory may keep. */
      userMessage: string
      /** Present when the model stopped at the turn's `maxOutputTokens`. */
      truncated?: true
    }
  | { type: 'error'; code: TurnErrorCode; message: string; policy?: string }

/** What a turn needs from the platform; the AI area builds it once. */
export interface TurnDeps {
  platform: Platform
  /** The runtime `platform.ai.runtime` selects. */
  activeRuntime: () => AiRuntime | undefined
  runtime: (name: string) => AiRuntime | undefined
  maxToolRounds: number
  /** The tools an agent's model is offered: its own and those the operator lists for it. */
  agentTools: (agent: string) => OfferedTools
  /** The learning-signal loop's bounds (see feedback.ts). */
  feedback: FeedbackOptions
  /** What another area added at AI_AGENT_RUNS, read per turn. */
  readonly runExtension?: AgentRunExtension | undefined
}

/** The turn of an agent's own run(), as another area's host calls see it. */
export interface AgentRunTurn {
  agent: RegisteredAgent
  /** The request as admitted (after any transform); its `userId` is who the turn runs for. */
  request: AiRequest
  /** Aborted when the turn ends: finished, failed or cancelled. */
  signal: AiCancelSignal
  /** Reports a step to the turn's client, as the run's own `ctx.progress({ step })` does. */
  step(name: string, description?: string, data?: unknown): void
}

/**
 * Extra host calls for the runs of some agents (the fleet area answers `ctx.fleet` of
 * coordinators): given a turn, the handler of its `agent.fleet.*` calls, or undefined.
 */
export type AgentRunExtension = (turn: AgentRunTurn) => ((op: string, args: unknown[]) => Promise<unknown>) | undefined
