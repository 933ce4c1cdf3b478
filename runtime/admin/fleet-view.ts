/**
 * What the admin surface reads of the agent fleet (coordinators, the coordination journal, A2A
 * tasks, workflow approvals). The fleet area does not exist yet: until it provides its own view,
 * the admin routes answer from EMPTY_FLEET, so every collection is an empty list, never a 404.
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

/** `{taskId, contextId, state, statusMessage, createdAt}`; the detail adds `messageCount, artifactCount, metadata`. */
export interface TaskInfo {
  taskId: string
  contextId: string
  state: string
  statusMessage: string
  createdAt: string
  messageCount: number
  artifactCount: number
  metadata: Record<string, unknown>
}

export interface ApprovalInfo {
  approvalId: string
  workflowId: string
  nodeId: string
  requestedAt: string
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
  tasks(contextId?: string): TaskInfo[]
  task(id: string): TaskInfo | undefined
  /** Cancels a SUBMITTED or WORKING task; undefined when the id is unknown. */
  cancelTask(id: string): boolean | undefined
  approvals(): ApprovalInfo[]
  /** Decides a pending approval; false when none is pending under that id. */
  decide(approvalId: string, approve: boolean): boolean
  /** Runs a stored workflow on a registered coordinator; resolves to the WorkflowRun record. */
  runWorkflow(workflow: WorkflowManifest, coordinator: string, input: unknown): Promise<Record<string, unknown>>
  readonly coordinatorCount: number
  readonly taskCount: number
}

export const EMPTY_FLEET: FleetView = {
  coordinators: () => [],
  coordinatorHealth: () => undefined,
  coordinatorFleet: () => undefined,
  journal: () => Promise.resolve([]),
  coordination: () => Promise.resolve(undefined),
  tasks: () => [],
  task: () => undefined,
  cancelTask: () => undefined,
  approvals: () => [],
  decide: () => false,
  // unreachable: with no coordinator registered, the run route refuses before it asks
  runWorkflow: () => Promise.reject(new Error('no fleet is installed')),
  coordinatorCount: 0,
  taskCount: 0
}
