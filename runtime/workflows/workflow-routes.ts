/**
 * The workflow routes under /api/admin: manifests (list, read, save with an optimistic version,
 * delete); the run route, which needs a coordinator of the fleet (with none registered it is
 * refused, as with zero fleets); the runs kept; the approvals runs wait for.
 */
import type { AdminRoute } from '../admin/index.js'
import { PlatformError, isPlatformError, isWireError } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import { parseManifest, type WorkflowManifest } from './workflow-manifest.js'
import { graphOf } from './workflow-graph.js'
import type { WorkflowRunReads, WorkflowRuns } from './workflow-runs.js'
import type { WorkflowStore } from './workflow-store.js'
import { WORKFLOWS_ERRORS } from './errors.js'

export const RUNS_DEFAULT_LIMIT = 50
export const RUNS_MAX_LIMIT = 500

function idOf(body: unknown): string {
  const id = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).id : undefined
  return typeof id === 'string' ? id : ''
}

export interface WorkflowRouteDeps {
  store: WorkflowStore
  /** Starts runs on this node. */
  runs: WorkflowRuns
  /** Lists and reads runs and decides approvals: this node's, or every node's. */
  reads: WorkflowRunReads
  /** Names of the coordinators the loaded plugins declare, read per run. */
  coordinators: () => string[]
  logger: Logger
}

export function workflowRoutes(d: WorkflowRouteDeps): AdminRoute[] {
  const { store, runs, reads } = d
  const find = async (id: string): Promise<WorkflowManifest> => {
    const w = await store.find(id)
    if (w === undefined) throw new PlatformError(WORKFLOWS_ERRORS.UNKNOWN_WORKFLOW, { id })
    return w
  }
  return [
    // /workflow/approvals and /workflow/runs are never workflow ids: the router prefers a static segment
    {
      method: 'GET',
      path: '/workflow/approvals',
      summary: 'Workflow steps waiting for an approval',
      gate: { read: 'open' },
      handler: () => reads.approvals()
    },
    {
      method: 'POST',
      path: '/workflow/approvals/{approvalId}',
      summary: 'Approves or rejects a pending workflow step',
      gate: { write: 'workflow.approve', target: (r) => r.params.approvalId ?? '' },
      body: { type: 'object', required: ['approve'], properties: { approve: { type: 'boolean' } } },
      handler: async ({ params, body }) => {
        const id = params.approvalId!
        const approve = (body as { approve: boolean }).approve
        if (!(await reads.decide(id, approve))) throw new PlatformError(WORKFLOWS_ERRORS.NO_PENDING_APPROVAL, { id })
        return { approvalId: id, approved: approve }
      }
    },
    {
      method: 'GET',
      path: '/workflow',
      summary: 'Workflow manifests, ordered by name',
      gate: { read: 'open' },
      handler: () => store.list()
    },
    {
      method: 'POST',
      path: '/workflow',
      summary: 'Creates (version 1) or updates (stored version + 1) a workflow manifest',
      gate: { write: 'workflow.write', target: (r) => idOf(r.body) },
      handler: async ({ body, principal }) => {
        const m = parseManifest(body)
        // what a run would refuse (a cycle, too many nodes, a bad node config) is refused now, not later
        try {
          graphOf(m)
        } catch (err) {
          if (isPlatformError(err, WORKFLOWS_ERRORS.WORKFLOW_NOT_RUNNABLE))
            throw new PlatformError(WORKFLOWS_ERRORS.WORKFLOW_INVALID, { detail: err.message })
          throw err
        }
        let saved: WorkflowManifest
        try {
          saved = await store.save(m, principal!.name)
        } catch (err) {
          if (isWireError(err)) throw err
          d.logger.error({ err, workflow: m.id }, 'workflow store write failed')
          throw new PlatformError(
            WORKFLOWS_ERRORS.WORKFLOW_STORAGE_FAILURE,
            { id: m.id },
            { extra: { kind: 'STORAGE_FAILURE' } }
          )
        }
        return { id: saved.id, name: saved.name, version: saved.version, updatedAt: saved.updatedAt }
      }
    },
    {
      method: 'GET',
      path: '/workflow/{id}',
      summary: 'One workflow manifest',
      gate: { read: 'open' },
      handler: ({ params }) => find(params.id!)
    },
    {
      method: 'DELETE',
      path: '/workflow/{id}',
      summary: 'Deletes a workflow manifest',
      gate: { write: 'workflow.delete', target: (r) => r.params.id ?? '' },
      handler: async ({ params }) => {
        if (!(await store.delete(params.id!)))
          throw new PlatformError(WORKFLOWS_ERRORS.UNKNOWN_WORKFLOW, { id: params.id })
        return { deleted: params.id }
      }
    },
    {
      method: 'POST',
      path: '/workflow/{id}/run',
      summary:
        'Runs a workflow on a coordinator of the fleet ({input}); 200 with the ended run, 202 when it waits for an approval',
      gate: { write: 'workflow.run', target: (r) => r.params.id ?? '' },
      query: { type: 'object', properties: { coordinator: { type: 'string', minLength: 1 } } },
      accepted:
        'The run stopped at an approval node: status WAITING_APPROVAL, pendingApproval set; it goes on once decided',
      statuses: [503],
      handler: async ({ params, query, body, principal, ctx }) => {
        const w = await find(params.id!)
        const names = d.coordinators()
        const asked = query.coordinator as string | undefined
        if (asked === undefined && names.length !== 1)
          throw new PlatformError(WORKFLOWS_ERRORS.WORKFLOW_COORDINATOR_REQUIRED)
        const coordinator = asked ?? names[0]!
        if (!names.includes(coordinator))
          throw new PlatformError(WORKFLOWS_ERRORS.UNKNOWN_WORKFLOW_COORDINATOR, {
            name: coordinator,
            registered: names.join(', ')
          })
        const input = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).input : undefined
        const run = await runs.start(w, coordinator, input, principal!.name)
        if (run.status !== 'WAITING_APPROVAL') return run
        ctx.json(run, 202)
        return undefined
      }
    },
    {
      method: 'GET',
      path: '/workflow/runs',
      summary: 'Workflow runs, newest first (the last 500 are kept: in memory, or in PostgreSQL for every node)',
      // a run holds its input and every agent's answer: content, like the journal's subjects
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: RUNS_MAX_LIMIT, default: RUNS_DEFAULT_LIMIT }
        }
      },
      handler: ({ query }) => reads.list(query.limit as number)
    },
    {
      method: 'GET',
      path: '/workflow/runs/{runId}',
      summary: 'One workflow run with its node results',
      gate: { read: 'content' },
      handler: async ({ params }) => {
        const run = await reads.get(params.runId!)
        if (run === undefined) throw new PlatformError(WORKFLOWS_ERRORS.UNKNOWN_WORKFLOW_RUN, { id: params.runId })
        return run
      }
    }
  ]
}
