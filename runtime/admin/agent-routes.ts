/**
 * Agents and what the platform holds about each: sessions (AI area), the rules that govern it
 * (its system prompt, its scope and the governance policies that apply to it), facts (lessons the
 * governance memory sink keeps about a user: fact-routes.ts), conversation history (AI conversation memory) and
 * its workspace (no planning or file primitive is attached yet: reported as such).
 */
import { PlatformError } from '../contracts/index.js'
import { MAX_CONVERSATION_ID_LENGTH, type AgentInfo } from '../ai/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import type { AdminDeps } from './admin-deps.js'
import { factRoutes } from './fact-routes.js'
import type { AdminRoute } from './route-table.js'
import { ADMIN_ERRORS } from './errors.js'
import { AI_ERRORS } from '../ai/index.js'

const SCOPE_PREFIX = 'scope::'
const CONVERSATION_MAX_LIMIT = 10_000

/** An agent as admin lists it, from the AI area's view (which knows the protocols it really serves). */
function agentRow(a: AgentInfo): Record<string, unknown> {
  return {
    name: a.name,
    path: a.path,
    handlerClass: `plugin:${a.plugin}`,
    version: a.version,
    description: a.description,
    headless: a.headless,
    protocols: a.protocols,
    ...(a.fleet !== undefined ? { coordinator: true, fleet: a.fleet } : {})
  }
}

export function agentRoutes(d: AdminDeps): AdminRoute[] {
  const agent = (name: string): RegisteredAgent => {
    const a = d.platform.plugins.agents().find((x) => x.name === name)
    if (a === undefined) throw new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: name })
    return a
  }
  // an id memory could never hold is simply unknown (memory itself would throw on it)
  const conversationId = (id: string): string => {
    if (id.length > MAX_CONVERSATION_ID_LENGTH)
      throw new PlatformError(ADMIN_ERRORS.UNKNOWN_CONVERSATION, { id: id.slice(0, 64) })
    return id
  }
  return [
    {
      method: 'GET',
      path: '/agents',
      summary: 'Every agent plugins contribute: {name, path, handlerClass, version, description, headless, protocols}',
      gate: { read: 'open' },
      handler: () => d.ai.agents().map(agentRow)
    },
    {
      method: 'GET',
      path: '/agents/{name}',
      summary: 'One agent',
      gate: { read: 'open' },
      handler: ({ params }) => {
        const name = agent(params.name!).name
        return agentRow(d.ai.agents().find((a) => a.name === name)!)
      }
    },
    {
      method: 'GET',
      path: '/agents/{name}/sessions',
      summary: 'Active sessions of an agent: {sessionId, agentName, transport, startTime, lastActivity, messageCount}',
      gate: { read: 'open' },
      handler: ({ params }) => d.ai.sessions.list(agent(params.name!).name)
    },
    {
      method: 'GET',
      path: '/agents/{name}/rules',
      summary: 'What governs an agent: its system prompt, its scope and the governance policies that apply to it',
      gate: { read: 'open' },
      handler: ({ params }) => {
        const a = agent(params.name!)
        const own = SCOPE_PREFIX + a.name
        const policies = (d.governance?.listing() ?? []).filter((p) => {
          const n = String(p.name)
          return !n.startsWith(SCOPE_PREFIX) || n === own
        })
        return { agentId: a.name, systemPrompt: a.systemPrompt ?? null, scope: a.scope ?? null, policies }
      }
    },
    ...factRoutes(d, agent),
    {
      method: 'GET',
      path: '/agents/{name}/conversation/{sessionId}',
      summary: 'The conversation history kept under a conversation id (oldest first)',
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: { limit: { type: 'integer', minimum: 1, maximum: CONVERSATION_MAX_LIMIT } }
      },
      handler: async ({ params, query }) => {
        const a = agent(params.name!)
        const id = conversationId(params.sessionId!)
        const messages = await d.ai.memory.read(id, query.limit as number | undefined)
        if (messages.length === 0) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_CONVERSATION, { id })
        return { agentId: a.name, sessionId: id, messages }
      }
    },
    {
      method: 'DELETE',
      path: '/agents/{name}/conversation/{sessionId}',
      summary: 'Forgets the conversation history kept under a conversation id',
      gate: { write: 'agent_state.conversation.clear', target: (r) => `${r.params.name}/${r.params.sessionId}` },
      handler: async ({ params }) => {
        agent(params.name!)
        const id = conversationId(params.sessionId!)
        if (!(await d.ai.memory.clear(id))) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_CONVERSATION, { id })
        return { cleared: id }
      }
    },
    {
      method: 'GET',
      path: '/agents/{name}/workspace',
      summary: "An agent's workspace (plan and files); no workspace primitive is attached yet",
      gate: { read: 'workspace' },
      handler: ({ params }) => ({ agentId: agent(params.name!).name, attached: false, plan: null, files: [] })
    }
  ]
}
