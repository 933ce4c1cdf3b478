/** The AI area: the runtime contract, its runtimes, and (later) agent turns. */
export { AI } from './key.js'
export type { AiService } from './ai-service.js'
export type {
  AiCancelSignal,
  AiRuntime,
  AiRuntimeInfo,
  AiRuntimeRequest,
  AiEvent,
  AiMessage,
  AiToolCall,
  AiToolSpec,
  AiCapability,
  AiErrorCode,
  TokenUsage
} from './runtime.js'
export { DemoRuntime, countTokens } from './demo-runtime.js'
export { OpenAiRuntime, type OpenAiRuntimeOptions } from './openai-runtime.js'
export { RuntimeRegistry } from './runtime-registry.js'
export { PluginRuntime } from './plugin-runtime.js'
export {
  InMemoryConversationMemory,
  LmdbConversationMemory,
  MAX_CONVERSATION_ID_LENGTH,
  type ConversationMemory,
  type MemoryKey
} from './memory.js'
export { AgentSessions, type AgentSessionInfo } from './sessions.js'
export { FEEDBACK_LINE_CHARS } from './feedback.js'
export { runTurn, type TurnRequest, type TurnEvent, type TurnErrorCode, type TurnDeps } from './turn-pipeline.js'
export type { AgentRunTurn, AgentRunExtension } from './turn-types.js'
export { AGENT_BASE, agentChatPath, agentAguiPath } from './agent-paths.js'
export { AgentPathRoutes, type AgentPathRoutesOptions } from './agent-path-routes.js'
export { agentInfo, type AgentInfo, type AgentProtocol } from './agent-info.js'
export { parseAguiInput, type AguiRunInput } from './agui-input.js'
export { AguiRun, type AguiEvent } from './agui-events.js'
export { AI_ERRORS } from './errors.js'
