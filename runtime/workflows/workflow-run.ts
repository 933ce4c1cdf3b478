/**
 * The record of one workflow run as the routes answer it: its status, how each node went, and the
 * approval it waits for while one is pending.
 */

/** A workflow step waiting for a decision; its `toolName` is `workflow:<workflowId>:<nodeId>`. */
export interface ApprovalInfo {
  /** `apr_` and 12 hex digits. */
  approvalId: string
  toolName: string
  arguments: { workflowId: string; nodeId: string; runId: string }
  message: string
  /** The run's coordination id, so the approval can be found in the journal. */
  conversationId: string
  /** ISO-8601; past it the approval counts as denied. */
  expiresAt: string
}

export type WorkflowRunStatus = 'RUNNING' | 'WAITING_APPROVAL' | 'SUCCEEDED' | 'FAILED'

/** How one node of a run went; `duration` is milliseconds. */
export interface NodeResultInfo {
  nodeId: string
  type: string
  status: 'SUCCEEDED' | 'FAILED' | 'SKIPPED' | 'WAITING_APPROVAL'
  output: string
  error: string
  duration: number
}

/** One run of a workflow on a coordinator. */
export interface WorkflowRunInfo {
  runId: string
  workflowId: string
  coordinator: string
  /** The `coord-<uuid>` its agent calls are journalled under. */
  coordinationId: string
  status: WorkflowRunStatus
  nodeResults: NodeResultInfo[]
  output: string
  /** The approval the run waits for, while WAITING_APPROVAL; null otherwise. */
  pendingApproval: ApprovalInfo | null
  startedAt: string
  /** Null until the run ends. */
  completedAt: string | null
}
