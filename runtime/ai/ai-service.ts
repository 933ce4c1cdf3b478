import type { ConversationMemory } from './memory.js'
import type { AiRuntime, AiRuntimeInfo } from './runtime.js'
import type { AgentSessions } from './sessions.js'

/**
 * What the AI area offers today: the agents whose turns it will run and the runtimes that
 * answer them. The pipeline (governance, scope, tools over MCP, streaming over transport) is
 * built on `activeRuntime()` by later work.
 */
export interface AiService {
  /** Names of the agents the plugins contribute, whose turns this area runs, in registry order. */
  agentNames(): string[]
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
}
