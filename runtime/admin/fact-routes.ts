/**
 * An agent's facts: the lessons the governance memory sink keeps about a user (or session), which
 * the learning-signal loop puts into the system prompt of that subject's next turns. Operators
 * list them, add their own and remove any by id. A fact belongs to its subject, not to one agent:
 * every agent's turn for that user carries it, as it does a policy's lesson.
 */
import { PlatformError } from '../contracts/index.js'
import { FEEDBACK_LINE_CHARS } from '../ai/index.js'
import { namespaceKey, type GovernanceMemorySink } from '../governance/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import type { AdminDeps } from './admin-deps.js'
import type { AdminRequest, AdminRoute, JsonSchema } from './route-table.js'
import { ADMIN_ERRORS } from './errors.js'
import { HTTP_ERRORS } from '../http/index.js'

const FACTS_DEFAULT_LIMIT = 50
const FACTS_MAX_LIMIT = 1000
/** The feedback loop cuts a line at this length: a longer fact would not reach the prompt whole. */
export const FACT_MAX_CHARS = FEEDBACK_LINE_CHARS
/** Longer ids would not fit an LMDB key beside the rest of it. */
const SUBJECT_MAX_CHARS = 256

const subjectId = { type: 'string', minLength: 1, maxLength: SUBJECT_MAX_CHARS }
const SUBJECT_QUERY: JsonSchema = {
  type: 'object',
  properties: { userId: subjectId, sessionId: subjectId }
}

/** The namespace a request names: its user's, else its session's; undefined when it names neither. */
function namespaceOf(userId: unknown, sessionId: unknown): string | undefined {
  if (typeof userId === 'string' && userId !== '') return namespaceKey('user', userId)
  if (typeof sessionId === 'string' && sessionId !== '') return namespaceKey('session', sessionId)
  return undefined
}

/** The audit target, from the request as sent (the gate runs before validation). */
const target = (r: AdminRequest, ...rest: string[]): string =>
  [
    r.params.name,
    namespaceOf(r.ctx.query.get('userId') ?? undefined, r.ctx.query.get('sessionId') ?? undefined) ?? '',
    ...rest
  ].join('/')

export function factRoutes(d: AdminDeps, agent: (name: string) => RegisteredAgent): AdminRoute[] {
  const sink = (): GovernanceMemorySink => {
    const memory = d.governance?.memory
    if (memory === undefined) throw new PlatformError(ADMIN_ERRORS.AGENT_STATE_NOT_WIRED)
    return memory
  }
  const subject = (query: Record<string, unknown>): string => {
    const ns = namespaceOf(query.userId, query.sessionId)
    if (ns === undefined)
      throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: 'userId', detail: 'userId or sessionId is required' })
    return ns
  }
  return [
    {
      method: 'GET',
      path: '/agents/{name}/facts',
      summary: 'Lessons the governance memory sink keeps about a user (or session), newest first, each with its id',
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          userId: subjectId,
          sessionId: subjectId,
          limit: { type: 'integer', minimum: 1, maximum: FACTS_MAX_LIMIT, default: FACTS_DEFAULT_LIMIT }
        }
      },
      handler: async ({ params, query }) => {
        const a = agent(params.name!)
        const namespace = namespaceOf(query.userId, query.sessionId) ?? 'anonymous'
        const memory = d.governance?.memory
        const facts = memory === undefined ? [] : await memory.recall(namespace, query.limit as number)
        return { agentId: a.name, namespace, enabled: memory !== undefined, facts }
      }
    },
    {
      method: 'POST',
      path: '/agents/{name}/facts',
      summary:
        "Adds an operator's fact about a user (or session): the next turns for them carry it in the system prompt",
      gate: { write: 'agent_state.fact.add', target: (r) => target(r) },
      query: SUBJECT_QUERY,
      body: {
        type: 'object',
        required: ['content'],
        properties: {
          content: { type: 'string', minLength: 1, maxLength: FACT_MAX_CHARS },
          confidence: { type: 'number', minimum: 0, maximum: 1 }
        },
        additionalProperties: false
      },
      handler: async ({ params, query, body, principal }) => {
        agent(params.name!)
        const memory = sink()
        const namespace = subject(query)
        const { content, confidence } = body as { content: string; confidence?: number }
        if (content.trim() === '')
          throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: "'content' must not be blank" })
        // stored below the floor, it would never be listed nor recalled
        if (confidence !== undefined && confidence < memory.minConfidence)
          throw new PlatformError(HTTP_ERRORS.INVALID_BODY, {
            detail: `'confidence' is below platform.ai.governance.memory.min-confidence (${memory.minConfidence})`
          })
        return await memory.add(namespace, content.trim(), principal!.name, confidence)
      }
    },
    {
      method: 'DELETE',
      path: '/agents/{name}/facts/{factId}',
      summary: "Removes one fact (an operator's or a policy's lesson) of a user (or session) by its id",
      gate: { write: 'agent_state.fact.remove', target: (r) => target(r, r.params.factId ?? '') },
      query: SUBJECT_QUERY,
      handler: async ({ params, query }) => {
        agent(params.name!)
        const memory = sink()
        const namespace = subject(query)
        const id = params.factId!
        if (!(await memory.remove(namespace, id)))
          throw new PlatformError(ADMIN_ERRORS.UNKNOWN_FACT, { id: id.slice(0, 64), namespace })
        return { removed: id }
      }
    }
  ]
}
