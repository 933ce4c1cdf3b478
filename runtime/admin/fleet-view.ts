/**
 * What the admin surface reads of the agent fleet (coordinators, the coordination journal,
 * workflow runs and approvals; A2A tasks are the TaskView's). The fleet area adds its view at
 * ADMIN_FLEET_VIEW; without one (not installed), the admin routes answer from EMPTY_FLEET: every collection
 * empty, never a 404.
 */
import type { WorkflowManifest } from './workflow-manifest.js'

/** `{name, agentCount, availableCount}`. */
export interface CoordinatorInfo {
  name: string
  agentCount: number
  availableCount: number
}

/** One journal event: `{type, coordinationId, timestamp, ...fields of its type}`. */
export type JournalEvent = { type: string; coordinationId: string; timestamp: string } & Record<string, unknown>

export interface JournalQuery {
  coordinationId?: string
  agent?: string
  since?: number
  until?: number
  limit: number
}

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

export interface FleetView {
  coordinators(): CoordinatorInfo[]
  /** `{coordinator, timestamp, agents:[{name, available, circuitState, recentFailures}]}`, undefined when unknown. */
  coordinatorHealth(name: string): Record<string, unknown> | undefined
  /** `{name, agents:[{name, version, isAvailable, isLocal, weight}]}`, undefined when unknown. */
  coordinatorFleet(name: string): Record<string, unknown> | undefined
  /** Newest first; the journal store is asynchronous (it may be durable). */
  journal(q: JournalQuery): Promise<JournalEvent[]>
  /** The events of one coordination, oldest first; undefined when the id is unknown. */
  coordination(id: string): Promise<JournalEvent[] | undefined>
  approvals(): ApprovalInfo[]
  /** Decides a pending approval; false when none is pending under that id. */
  decide(approvalId: string, approve: boolean): boolean
  /**
   * Starts a stored workflow on a registered coordinator for `principal`; resolves with the run once
   * it has ended or stopped at an approval (WAITING_APPROVAL), which then goes on in the background.
   */
  runWorkflow(
    workflow: WorkflowManifest,
    coordinator: string,
    input: unknown,
    principal: string
  ): Promise<WorkflowRunInfo>
  /** The runs kept (a bounded window), newest first. */
  workflowRuns(): WorkflowRunInfo[]
  workflowRun(runId: string): WorkflowRunInfo | undefined
  readonly coordinatorCount: number
}

export const EMPTY_FLEET: FleetView = {
  coordinators: () => [],
  coordinatorHealth: () => undefined,
  coordinatorFleet: () => undefined,
  journal: () => Promise.resolve([]),
  coordination: () => Promise.resolve(undefined),
  approvals: () => [],
  decide: () => false,
  workflowRuns: () => [],
  workflowRun: () => undefined,
  // unreachable: with no coordinator registered, the run route refuses before it asks
  runWorkflow: () => Promise.reject(new Error('no fleet is installed')),
  coordinatorCount: 0
}
