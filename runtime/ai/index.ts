/** The AI area: the runtime contract, its runtimes, and (later) agent turns. */
export { AI, AI_AGENT_PROTOCOLS, AI_AGENT_RUNS } from './key.js'
export type { AiService } from './ai-service.js'
export type {
  AiCancelSignal,
  AiRuntime,
  AiRuntimeRequest,
  AiEvent,
  AiMessage,
  AiResponseFormat,
  AiToolCall,
  AiToolSpec,
  TokenUsage
} from './runtime.js'
export { usage } from './runtime.js'
export { DemoRuntime } from './demo-runtime.js'
export { MAX_CONVERSATION_ID_LENGTH } from './memory.js'
export { FEEDBACK_LINE_CHARS } from './feedback.js'
export { type TurnRequest, type TurnEvent } from './turn-pipeline.js'
export type { AgentRunTurn, AgentRunExtension } from './turn-types.js'
export { AGENT_BASE, agentChatPath } from './agent-paths.js'
export { AgentPathRoutes } from './agent-path-routes.js'
export { type AgentInfo } from './agent-info.js'
export { AI_ERRORS } from './errors.js'
