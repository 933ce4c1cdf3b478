import { AreaKey, ExtensionPoint } from '../contracts/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import type { AgentProtocol } from './agent-info.js'
import type { AiService } from './ai-service.js'
import type { AgentRunExtension } from './turn-types.js'

/** The AI area's service, provided by its install. */
export const AI = new AreaKey<AiService>('ai')

/** An area serving agents over a protocol of its own (A2A): where it serves each agent, undefined where it does not. */
export interface AgentProtocolServer {
  protocol: Exclude<AgentProtocol, 'mcp' | 'agui'>
  pathOf(agent: RegisteredAgent): string | undefined
}

/** Protocols other areas serve agents over, so `agents()` lists them; for one protocol the last added wins. */
export const AI_AGENT_PROTOCOLS = new ExtensionPoint<AgentProtocolServer>('ai', 'agent-protocols')

/**
 * More host calls for agents' own runs (the fleet area: `ctx.fleet` of coordinators), so the AI
 * area needs no import of the area that extends it. One at most.
 */
export const AI_AGENT_RUNS = new ExtensionPoint<AgentRunExtension>('ai', 'agent-runs', true)
