/**
 * What the admin surface reads of the A2A tasks: the A2A area adds its view at ADMIN_TASK_VIEW;
 * without one (A2A switched off or not installed) the task routes answer from EMPTY_TASKS.
 */

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

/** Asynchronous: the tasks may be kept in a database shared by the nodes of a cluster. */
export interface TaskView {
  /** Every caller's tasks, newest first, optionally of one context. */
  tasks(contextId?: string): Promise<TaskInfo[]>
  task(id: string): Promise<TaskInfo | undefined>
  /** Cancels a SUBMITTED or WORKING task; false when its state does not allow it, undefined when the id is unknown. */
  cancelTask(id: string): Promise<boolean | undefined>
  readonly taskCount: number
}

export const EMPTY_TASKS: TaskView = {
  tasks: async () => [],
  task: async () => undefined,
  cancelTask: async () => undefined,
  taskCount: 0
}
