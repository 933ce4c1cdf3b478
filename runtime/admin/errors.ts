import { defineErrors } from '../contracts/index.js'

/**
 * The admin control plane's codes: resources, conversations, facts, fleets, eval runs, runtimes.
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
  EVAL_RUN_INVALID: { status: 400, message: (p) => `Invalid eval run: ${p.detail}` },
  EVAL_RUN_EXISTS: { status: 400, message: (p) => `EvalRun id ${p.id} already exists; eval runs are immutable` },
  UNKNOWN_EVAL_RUN: { status: 404, message: (p) => `Unknown eval run '${p.id}'` },
  NO_ACTIVE_RUNTIME: {
    status: 404,
    message: 'No active AI runtime',
    hint: 'platform.ai.runtime names the runtime; GET /api/admin/runtimes lists those known and whether each is available'
  }
})
