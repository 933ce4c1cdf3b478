import type { TaskStore } from './task-store.js'

/** What the A2A area offers: the tasks its agents' endpoints keep, and where each agent is served. */
export interface A2aService {
  readonly tasks: TaskStore
  /** The path of an agent's A2A endpoint, undefined when it is not served. */
  pathOf(agentName: string): string | undefined
}
