import type { RegisteredAgent } from '../plugins/index.js'
import { agentChatPath } from './agent-paths.js'

/** Protocols an agent can be talked to over; only those actually served are listed for it. */
export type AgentProtocol = 'mcp' | 'agui' | 'a2a'

/** An agent as the platform lists it: what its plugin declares and where and how it is served now. */
export interface AgentInfo {
  name: string
  /** The agent's chat path. */
  path: string
  version: string
  description: string
  headless: boolean
  plugin: string
  /** Served protocols, in the order mcp, agui, a2a. */
  protocols: AgentProtocol[]
  /** Where each served protocol is, by protocol name. */
  endpoints: Partial<Record<AgentProtocol, string>>
  /** A coordinator's fleet: the names of the agents it dispatches to (absent for other agents). */
  fleet?: string[]
}

/** Where each protocol serves one agent, undefined when it does not (the area serving it answers). */
export type ProtocolEndpoints = Record<AgentProtocol, (agent: RegisteredAgent) => string | undefined>

export function agentInfo(agent: RegisteredAgent, served: ProtocolEndpoints): AgentInfo {
  const protocols: AgentProtocol[] = []
  const endpoints: Partial<Record<AgentProtocol, string>> = {}
  for (const p of ['mcp', 'agui', 'a2a'] as const) {
    const at = served[p](agent)
    if (at === undefined) continue
    protocols.push(p)
    endpoints[p] = at
  }
  return {
    name: agent.name,
    path: agentChatPath(agent),
    version: agent.version,
    description: agent.description,
    headless: agent.headless,
    plugin: agent.plugin,
    protocols,
    endpoints,
    ...(Array.isArray(agent.fleet) ? { fleet: agent.fleet.map((r) => r.name) } : {})
  }
}
