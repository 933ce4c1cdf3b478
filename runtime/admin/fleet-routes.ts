/**
 * Coordinators and the coordination journal, read through the FleetView (empty
 * until the fleet area provides one), and A2A tasks through the TaskView (empty until the A2A area
 * provides one): collections answer empty lists, unknown ids 404.
 */
import { shown } from './shown-value.js'
import { PlatformError } from '../contracts/index.js'
import type { AdminDeps } from './admin-deps.js'
import type { JournalEvent, JournalQuery } from './fleet-view.js'
import { journalLog, journalTree } from './journal-format.js'
import type { AdminRoute } from './route-table.js'
import { ADMIN_ERRORS } from './errors.js'
import { HTTP_ERRORS } from '../http/index.js'

export const JOURNAL_DEFAULT_LIMIT = 100
export const JOURNAL_MAX_LIMIT = 10_000
const str = { type: 'string', minLength: 1 }

// ISO 8601 with its zone (`Z` or an offset), or a date alone (UTC midnight): Date.parse alone
// would take `1` for the year 2001 and a zoneless time as the server's local time
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/

function instant(q: Record<string, unknown>, name: 'since' | 'until'): number | undefined {
  const raw = q[name]
  if (raw === undefined) return undefined
  const ms = typeof raw === 'string' && ISO_INSTANT.test(raw) ? Date.parse(raw) : NaN
  if (Number.isNaN(ms))
    throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name, detail: `Invalid timestamp: ${shown(raw)}` })
  return ms
}

export function fleetRoutes(d: AdminDeps): AdminRoute[] {
  // read d.fleet on every call: the fleet area may hand its view over after start-up
  const coordination = async (id: string): Promise<JournalEvent[]> => {
    const events = await d.fleet.coordination(id)
    // a store answers an unknown id with no events, a view with undefined: both are 404
    if (events === undefined || events.length === 0) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_COORDINATION, { id })
    return events
  }
  return [
    {
      method: 'GET',
      path: '/coordinators',
      summary: 'Coordinators: {name, agentCount, availableCount}',
      gate: { read: 'open' },
      handler: () => d.fleet.coordinators()
    },
    {
      method: 'GET',
      path: '/coordinators/{name}/health',
      summary: 'Health of the agents of a coordinator',
      gate: { read: 'open' },
      handler: ({ params }) => {
        const h = d.fleet.coordinatorHealth(params.name!)
        if (h === undefined) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_COORDINATOR, { name: params.name })
        return h
      }
    },
    {
      method: 'GET',
      path: '/coordinators/{name}/fleet',
      summary: 'The agents a coordinator dispatches to',
      gate: { read: 'open' },
      handler: ({ params }) => {
        const fl = d.fleet.coordinatorFleet(params.name!)
        if (fl === undefined) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_COORDINATOR, { name: params.name })
        return fl
      }
    },
    {
      method: 'GET',
      path: '/journal',
      summary: 'Coordination journal events, filtered by coordination, agent and time',
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          coordinationId: str,
          agent: str,
          since: str,
          until: str,
          limit: { type: 'integer', minimum: 1, maximum: JOURNAL_MAX_LIMIT, default: JOURNAL_DEFAULT_LIMIT }
        }
      },
      handler: ({ query }) => {
        const q: JournalQuery = { limit: query.limit as number }
        if (query.coordinationId !== undefined) q.coordinationId = String(query.coordinationId)
        if (query.agent !== undefined) q.agent = String(query.agent)
        const since = instant(query, 'since')
        const until = instant(query, 'until')
        if (since !== undefined) q.since = since
        if (until !== undefined) q.until = until
        return d.fleet.journal(q)
      }
    },
    {
      method: 'GET',
      path: '/journal/{id}',
      summary: 'The events of one coordination, oldest first',
      gate: { read: 'content' },
      handler: ({ params }) => coordination(params.id!)
    },
    {
      method: 'GET',
      path: '/journal/{id}/tree',
      summary: 'The events of one coordination as a tree: roots in journal order, children under their parent',
      gate: { read: 'content' },
      handler: async ({ params }) => journalTree(await coordination(params.id!))
    },
    {
      method: 'GET',
      path: '/journal/{id}/log',
      summary: 'The events of one coordination as plain text: `<N> events:` and one line each',
      gate: { read: 'content' },
      produces: 'text/plain',
      handler: async ({ params, ctx }) => {
        const text = journalLog(await coordination(params.id!))
        ctx.send(200, text, 'text/plain; charset=utf-8')
        return undefined
      }
    },
    {
      method: 'GET',
      path: '/tasks',
      summary: 'A2A tasks: {taskId, contextId, state, statusMessage, createdAt}',
      // a task id is the handle an anonymous caller reads its task by, and the status message is the task's text
      gate: { read: 'content' },
      query: { type: 'object', properties: { contextId: str } },
      handler: async ({ query }) =>
        (await d.tasks.tasks(query.contextId as string | undefined)).map(
          ({ taskId, contextId, state, statusMessage, createdAt }) => ({
            taskId,
            contextId,
            state,
            statusMessage,
            createdAt
          })
        )
    },
    {
      method: 'GET',
      path: '/tasks/{taskId}',
      summary: 'One A2A task with its message and artifact counts and metadata',
      gate: { read: 'content' },
      handler: async ({ params }) => {
        const task = await d.tasks.task(params.taskId!)
        if (task === undefined) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_TASK, { id: params.taskId })
        return task
      }
    },
    {
      method: 'POST',
      path: '/tasks/{taskId}/cancel',
      summary: 'Cancels a submitted or working A2A task',
      gate: { write: 'cancel_task', target: (r) => r.params.taskId ?? '' },
      handler: async ({ params }) => {
        const done = await d.tasks.cancelTask(params.taskId!)
        if (done === undefined) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_TASK, { id: params.taskId })
        if (!done) throw new PlatformError(ADMIN_ERRORS.TASK_NOT_CANCELABLE, { id: params.taskId })
        return { status: 'task canceled' }
      }
    }
  ]
}
