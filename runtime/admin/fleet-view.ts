/**
 * What the admin surface reads of the agent fleet: coordinators and the coordination journal (A2A
 * tasks are the TaskView's; workflow runs are served by the workflows area). The fleet area adds
 * its view at ADMIN_FLEET_VIEW; without one (not installed), the admin routes answer from
 * EMPTY_FLEET: every collection empty, never a 404.
 */

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
  readonly coordinatorCount: number
}

export const EMPTY_FLEET: FleetView = {
  coordinators: () => [],
  coordinatorHealth: () => undefined,
  coordinatorFleet: () => undefined,
  journal: () => Promise.resolve([]),
  coordination: () => Promise.resolve(undefined),
  coordinatorCount: 0
}
