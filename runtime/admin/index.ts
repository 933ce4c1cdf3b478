/** The admin control plane: its route table, the fleet view it reads, its key. */
export { ADMIN_FLEET_VIEW, ADMIN_TASK_VIEW } from './key.js'
export {
  EMPTY_FLEET,
  type FleetView,
  type JournalEvent,
  type ApprovalInfo,
  type WorkflowRunInfo,
  type NodeResultInfo
} from './fleet-view.js'
export { type TaskView, type TaskInfo } from './task-view.js'
export { type WorkflowManifest, type WorkflowNode, type WorkflowEdge } from './workflow-manifest.js'
export { ADMIN_ERRORS } from './errors.js'
