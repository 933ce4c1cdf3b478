/** The admin control plane: its route table, the fleet view it reads, its key. */
export { ADMIN } from './key.js'
export type { AdminService } from './admin-service.js'
export type { AdminRoute, AdminRequest, RouteGate, JsonSchema } from './route-table.js'
export { ADMIN_BASE } from './route-table.js'
export {
  EMPTY_FLEET,
  type FleetView,
  type CoordinatorInfo,
  type JournalEvent,
  type JournalQuery,
  type ApprovalInfo,
  type WorkflowRunInfo,
  type WorkflowRunStatus,
  type NodeResultInfo
} from './fleet-view.js'
export { EMPTY_TASKS, type TaskView, type TaskInfo } from './task-view.js'
export { parseEvalRun, summarize, type EvalRun, type BaselineSummary } from './eval-run.js'
export { MemoryEvalRunStore, LmdbEvalRunStore, type EvalRunStore, type EvalIndexKey } from './eval-run-store.js'
export {
  parseManifest,
  NODE_TYPES,
  type WorkflowManifest,
  type WorkflowNode,
  type WorkflowEdge,
  type NodeType
} from './workflow-manifest.js'
export { MemoryWorkflowStore, LmdbWorkflowStore, type WorkflowStore } from './workflow-store.js'
export { ADMIN_ERRORS } from './errors.js'
