import { defineErrors } from '../contracts/index.js'

/** The workflows area's codes: manifests, runs and the approvals runs wait for. */
export const WORKFLOWS_ERRORS = defineErrors({
  NO_PENDING_APPROVAL: { status: 404, message: (p) => `No pending approval: ${p.id}` },
  WORKFLOW_INVALID: { status: 400, message: (p) => `Invalid workflow: ${p.detail}` },
  WORKFLOW_VERSION_CONFLICT: {
    status: 409,
    message: (p) => String(p.detail),
    hint: 'GET the workflow, apply your change to it and save it with its version + 1'
  },
  WORKFLOW_STORAGE_FAILURE: { status: 500, message: (p) => `workflow ${p.id} could not be stored` },
  UNKNOWN_WORKFLOW: { status: 404, message: (p) => `no workflow: ${p.id}` },
  WORKFLOW_COORDINATOR_REQUIRED: {
    status: 400,
    message: 'coordinator must be specified — zero or multiple fleets are registered',
    hint: 'Name one with ?coordinator=; GET /api/admin/coordinators lists them'
  },
  UNKNOWN_WORKFLOW_COORDINATOR: {
    status: 400,
    message: (p) => `unknown coordinator: ${p.name} (registered: [${p.registered}])`
  },
  WORKFLOW_NOT_RUNNABLE: {
    status: 400,
    message: (p) => String(p.detail),
    hint: 'Fix the workflow (POST /api/admin/workflow with its version + 1) and run it again'
  },
  WORKFLOW_RUNS_FULL: {
    status: 503,
    message: (p) => `${p.limit} workflow runs are still going (the limit); none can start until one ends`,
    hint: 'Decide or let expire the pending approvals (GET /api/admin/workflow/approvals), then retry'
  },
  UNKNOWN_WORKFLOW_RUN: {
    status: 404,
    message: (p) => `Unknown workflow run '${p.id}'`,
    hint: 'Only the last 500 runs are kept, in memory; GET /api/admin/workflow/runs lists them'
  }
})
