/**
 * Where an agent is talked to. Its `endpoint` names the chat path unless it ends in `/mcp` (then
 * it names only the MCP path, which the MCP area serves); otherwise the chat path is
 * `/platform/agent/{name}`. AG-UI is served at `{chat path}/agui`.
 */
export const AGENT_BASE = '/platform/agent'

export function agentChatPath(agent: { name: string; endpoint?: string }): string {
  const e = agent.endpoint ?? ''
  return e.startsWith('/') && !e.endsWith('/mcp') ? e.replace(/\/+$/, '') : `${AGENT_BASE}/${agent.name}`
}

export function agentAguiPath(agent: { name: string; endpoint?: string }): string {
  return `${agentChatPath(agent)}/agui`
}
