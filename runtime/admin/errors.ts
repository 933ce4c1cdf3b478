import { defineErrors } from '../contracts/index.js'

/**
 * The admin control plane's codes: resources, conversations, facts, fleets, workflows, eval runs, runtimes.
 */
export const ADMIN_ERRORS = defineErrors({
  MISSING_UNICAST_FIELDS: { status: 400, message: "missing 'broadcasterId', 'uuid' or 'message' field" },
  RESOURCE_NOT_RESUMABLE: {
    status: 409,
    message: (p) => `Resource '${p.uuid}' is a ${p.transport} connection; only a long-polling resource can be resumed`,
    hint: 'Resume answers the held poll of a long-polling client; DELETE /api/admin/resources/{uuid} ends any connection'
  },
  UNKNOWN_CONVERSATION: { status: 404, message: (p) => `No conversation '${p.id}'` },
  UNKNOWN_FACT: {
    status: 404,
    message: (p) => `No fact '${p.id}' under ${p.namespace}`,
    hint: 'GET /api/admin/agents/{name}/facts with the same userId or sessionId lists the ids'
  },
  AGENT_STATE_NOT_WIRED: {
    status: 503,
    message: 'State controller not wired',
    hint: 'Facts are the governance memory sink: set platform.ai.governance.memory.enabled=true (governance enabled)'
  },
  UNKNOWN_COORDINATOR: { status: 404, message: (p) => `Unknown coordinator '${p.name}'` },
  UNKNOWN_COORDINATION: { status: 404, message: (p) => `Unknown coordination '${p.id}'` },
  UNKNOWN_TASK: { status: 404, message: (p) => `Unknown task '${p.id}'` },
  TASK_NOT_CANCELABLE: { status: 409, message: (p) => `Task not cancelable: ${p.id}` },
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
  },
  EVAL_RUN_INVALID: { status: 400, message: (p) => `Invalid eval run: ${p.detail}` },
  EVAL_RUN_EXISTS: { status: 400, message: (p) => `EvalRun id ${p.id} already exists; eval runs are immutable` },
  UNKNOWN_EVAL_RUN: { status: 404, message: (p) => `Unknown eval run '${p.id}'` },
  NO_ACTIVE_RUNTIME: {
    status: 404,
    message: 'No active AI runtime',
    hint: 'platform.ai.runtime names the runtime; GET /api/admin/runtimes lists those known and whether each is available'
  }
})
