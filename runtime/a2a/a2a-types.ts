/**
 * The A2A 1.0 objects this platform speaks on the wire, in their ProtoJSON form (camelCase fields,
 * enums as their SCREAMING_SNAKE names). Only what the server produces or reads is typed.
 */

export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED'
] as const
export type TaskState = (typeof TASK_STATES)[number]

/** States a task never leaves; a stream on the task closes when it reaches one. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED'
])

/** Only text, url, raw and data parts exist in 1.0; this server reads the text ones. */
export interface Part {
  text?: string
  url?: string
  raw?: string
  data?: unknown
  mediaType?: string
  filename?: string
  metadata?: Record<string, unknown>
}

export interface Message {
  messageId: string
  role: 'ROLE_USER' | 'ROLE_AGENT'
  parts: Part[]
  contextId?: string
  taskId?: string
  metadata?: Record<string, unknown>
  referenceTaskIds?: string[]
}

export interface Artifact {
  artifactId: string
  name?: string
  parts: Part[]
  metadata?: Record<string, unknown>
}

export interface TaskStatus {
  state: TaskState
  message?: Message
  timestamp: string
}

export interface Task {
  id: string
  contextId: string
  status: TaskStatus
  artifacts?: Artifact[]
  history?: Message[]
  metadata?: Record<string, unknown>
}

export interface TaskStatusUpdateEvent {
  taskId: string
  contextId: string
  status: TaskStatus
  metadata?: Record<string, unknown>
}

export interface TaskArtifactUpdateEvent {
  taskId: string
  contextId: string
  artifact: Artifact
  append: boolean
  lastChunk: boolean
}

/** One event of a stream: exactly one of its fields is set. */
export type StreamResponse =
  | { task: Task }
  | { message: Message }
  | { statusUpdate: TaskStatusUpdateEvent }
  | { artifactUpdate: TaskArtifactUpdateEvent }
