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

export interface TaskView {
  /** Every caller's tasks, newest first, optionally of one context. */
  tasks(contextId?: string): TaskInfo[]
  task(id: string): TaskInfo | undefined
  /** Cancels a SUBMITTED or WORKING task; false when its state does not allow it, undefined when the id is unknown. */
  cancelTask(id: string): boolean | undefined
  readonly taskCount: number
}

export const EMPTY_TASKS: TaskView = {
  tasks: () => [],
  task: () => undefined,
  cancelTask: () => undefined,
  taskCount: 0
}
