/**
 * An MCP task as the task manager holds it, and what of it is kept (`TaskRecord`): the shapes the
 * manager and its stores (LMDB, Postgres) share.
 */
import type { CancelSignal } from '../plugins/index.js'
import type { JsonObject } from './types.js'

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'
export const TERMINAL: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['completed', 'failed', 'cancelled'])

/** One run of a task's tool: it completes, asks for input (MRTR), or fails with a protocol error. */
export type Outcome =
  | { kind: 'complete'; result: JsonObject }
  | { kind: 'input'; inputRequests: Record<string, JsonObject>; toolState?: unknown }
  | { kind: 'error'; error: { code: number; message: string; data?: unknown } }

export type Runner = (
  gathered: Record<string, unknown> | undefined,
  toolState: unknown,
  signal: CancelSignal
) => Promise<Outcome>

export interface Task {
  id: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  ttlMs: number
  pollIntervalMs: number
  result?: JsonObject
  error?: { code: number; message: string; data?: unknown }
  inputRequests?: Record<string, JsonObject>
  gathered?: Record<string, unknown>
  toolState?: unknown
  principal: string | null
  abort: AbortController
  resume?: () => void
  waiters: (() => void)[]
  /** Set once the task's handle is handed out: from then on every change is written to the store. */
  durable?: boolean
  /** A copy of a task another node runs (a shared store): read afresh at each request, changed through that node. */
  remote?: { node: string }
}

/** What of a task survives a restart (LMDB `mcp-tasks`); the run itself (runner, tool state) does not. */
export type TaskRecord = Pick<
  Task,
  | 'id'
  | 'status'
  | 'statusMessage'
  | 'createdAt'
  | 'lastUpdatedAt'
  | 'ttlMs'
  | 'pollIntervalMs'
  | 'result'
  | 'error'
  | 'inputRequests'
  | 'principal'
>

/** The status message (and error) of a task that was running when its process stopped. */
export const INTERRUPTED = 'interrupted: server restarted'

/** The status message (and error) of a task whose node stopped renewing its lease (killed, or cut off). */
export const NODE_LOST = 'interrupted: node lost'

export function recordOf(t: Task): TaskRecord {
  const r: TaskRecord = {
    id: t.id,
    status: t.status,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs,
    principal: t.principal
  }
  if (t.statusMessage !== undefined) r.statusMessage = t.statusMessage
  if (t.result !== undefined) r.result = t.result
  if (t.error !== undefined) r.error = t.error
  if (t.inputRequests !== undefined) r.inputRequests = t.inputRequests
  return r
}

/** A copy of another node's task takes the state the store holds. */
export function refresh(t: Task, r: TaskRecord): void {
  t.status = r.status
  t.lastUpdatedAt = r.lastUpdatedAt
  if (r.statusMessage !== undefined) t.statusMessage = r.statusMessage
  else delete t.statusMessage
  t.result = r.result
  t.error = r.error
  t.inputRequests = r.inputRequests
}
