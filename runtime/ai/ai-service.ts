import type { AgentInfo } from './agent-info.js'
import type { ConversationMemory } from './memory.js'
import type { AiCancelSignal, AiRuntime, AiRuntimeInfo } from './runtime.js'
import type { AgentSessions } from './sessions.js'
import type { TurnEvent, TurnRequest, TurnTextSink } from './turn-pipeline.js'

/**
 * What the AI area offers: the agents whose turns it runs, the runtimes that answer them, and
 * the governed turn itself (`runTurn`).
 */
export interface AiService {
  /** Names of the agents the plugins contribute, whose turns this area runs, in registry order. */
  agentNames(): string[]
  /** The loaded agents with the protocols (mcp, agui, a2a) each is actually served over now. */
  agents(): AgentInfo[]
  /** Every runtime the platform knows, built-in then plugin-contributed. */
  runtimes(): AiRuntimeInfo[]
  /** The runtime `platform.ai.runtime` selects; undefined when it is missing or unavailable. */
  activeRuntime(): AiRuntime | undefined
  /** A runtime by name. */
  runtime(name: string): AiRuntime | undefined
  /** Conversation history by conversation id, bounded by `platform.ai.memory.max-messages`. */
  readonly memory: ConversationMemory
  /** Agent sessions alive now: one per client connection and agent, announced on the bus. */
  readonly sessions: AgentSessions
  /**
   * Runs one governed agent turn (policies, scope preamble, runtime, tools, post-response
   * policies) as a stream of events ending in exactly one `complete` or `error`; never throws.
   * With `onText`, the text deltas go there, in order, instead of as `text` events.
   */
  runTurn(request: TurnRequest, signal?: AiCancelSignal, onText?: TurnTextSink): AsyncIterable<TurnEvent>
  /**
   * Resolves once what the turns so far recorded beside their answer (governance decisions) is
   * committed: an area that acknowledges a turn as a write waits for it before answering.
   */
  recordsWritten(): Promise<void>
  /** Turns started through `runTurn` and not yet ended (finished, failed, or abandoned by their reader). */
  inFlight(): number
}
