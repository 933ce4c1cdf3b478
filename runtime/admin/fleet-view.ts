/**
 * What the admin surface reads of the agent fleet (coordinators, the coordination journal,
 * workflow approvals; A2A tasks are the TaskView's). The fleet area does not exist yet: until it provides its own view,
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
  journal(q: JournalQuery): JournalEvent[]
  /** The events of one coordination, oldest first; undefined when the id is unknown. */
  coordination(id: string): JournalEvent[] | undefined
  approvals(): ApprovalInfo[]
  /** Decides a pending approval; false when none is pending under that id. */
  decide(approvalId: string, approve: boolean): boolean
  /** Runs a stored workflow on a registered coordinator; resolves to the WorkflowRun record. */
  runWorkflow(workflow: WorkflowManifest, coordinator: string, input: unknown): Promise<Record<string, unknown>>
  readonly coordinatorCount: number
}

export const EMPTY_FLEET: FleetView = {
  coordinators: () => [],
  coordinatorHealth: () => undefined,
  coordinatorFleet: () => undefined,
  journal: () => [],
  coordination: () => undefined,
  approvals: () => [],
  decide: () => false,
  // unreachable: with no coordinator registered, the run route refuses before it asks
  runWorkflow: () => Promise.reject(new Error('no fleet is installed')),
  coordinatorCount: 0
}
