import { randomUUID } from 'node:crypto'
import type { EventBus } from '../events/index.js'
import type { CancelSignal } from '../plugins/index.js'
import type { JsonObject } from './types.js'

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'
const TERMINAL = new Set<TaskStatus>(['completed', 'failed', 'cancelled'])

/** One run of a task's tool: it completes, asks for input (MRTR), or fails with a protocol error. */
export type Outcome =
  | { kind: 'complete', result: JsonObject }
  | { kind: 'input', inputRequests: Record<string, JsonObject>, toolState?: unknown }
  | { kind: 'error', error: { code: number, message: string, data?: unknown } }

export type Runner = (gathered: Record<string, unknown> | undefined, toolState: unknown, signal: CancelSignal) => Promise<Outcome>

export interface Task {
  id: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  ttlMs: number
  pollIntervalMs: number
  result?: JsonObject
  error?: { code: number, message: string, data?: unknown }
  inputRequests?: Record<string, JsonObject>
  gathered?: Record<string, unknown>
  toolState?: unknown
  principal: string | null
  abort: AbortController
  resume?: () => void
  waiters: (() => void)[]
}

/**
 * Tasks of long-running tool calls, for both forms: the 2026-07-28 tasks extension
 * (`io.modelcontextprotocol/tasks`: tasks/get, tasks/update, tasks/cancel) and the 2025-11-25
 * experimental form (tasks/get, tasks/result, tasks/list, tasks/cancel). A task is in the map
 * before its handle is returned, so an immediate tasks/get resolves. Terminal states are absorbing.
 */
export class TaskManager {
  private readonly tasks = new Map<string, Task>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly bus: EventBus, readonly defaultTtlMs: number, readonly pollIntervalMs: number) {
    this.sweeper = setInterval(() => { this.sweep() }, 30_000)
    this.sweeper.unref()
  }

  create (principal: string | null, ttlMs = this.defaultTtlMs): Task {
    const now = new Date().toISOString()
    const t: Task = { id: `task-${randomUUID()}`, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs, pollIntervalMs: this.pollIntervalMs, principal, abort: new AbortController(), waiters: [] }
    this.tasks.set(t.id, t)
    return t
  }

  /** Drops a task whose call settled inside the sync window: its handle was never handed out. */
  forget (t: Task): void { this.tasks.delete(t.id) }

  get (id: unknown, principal: string | null): Task | undefined {
    if (typeof id !== 'string') return undefined
    const t = this.tasks.get(id)
    if (t === undefined || (t.principal !== null && t.principal !== principal)) return undefined
    return t
  }

  list (principal: string | null): Task[] {
    return [...this.tasks.values()].filter((t) => t.principal === null || t.principal === principal)
  }

  isTerminal (t: Task): boolean { return TERMINAL.has(t.status) }

  /** Runs the task to a terminal state, pausing in input_required until tasks/update answers every request. */
  async drive (t: Task, runner: Runner, first: Promise<Outcome>): Promise<void> {
    let next = first
    for (;;) {
      let out: Outcome
      try { out = await next } catch (err) { out = { kind: 'error', error: { code: -32603, message: (err as Error).message } } }
      if (this.isTerminal(t)) return
      if (out.kind === 'complete') {
        t.result = out.result
        this.move(t, 'completed', out.result.isError === true ? 'Tool reported isError=true' : undefined)
        return
      }
      if (out.kind === 'error') { t.error = out.error; this.move(t, 'failed', out.error.message); return }
      t.inputRequests = out.inputRequests
      t.toolState = out.toolState
      this.move(t, 'input_required')
      await new Promise<void>((resolve) => { t.resume = resolve })
      t.resume = undefined
      if (this.isTerminal(t)) return
      this.move(t, 'working')
      next = runner(t.gathered, t.toolState, t.abort.signal)
    }
  }

  /** Merges responses; the task resumes once no request is pending. Unknown keys are ignored. */
  update (t: Task, responses: Record<string, unknown>): void {
    if (t.status !== 'input_required' || t.inputRequests === undefined) return
    const pending = { ...t.inputRequests }
    t.gathered ??= {}
    for (const [k, v] of Object.entries(responses)) {
      if (k in pending) { t.gathered[k] = v; delete pending[k] }
    }
    t.inputRequests = pending
    t.lastUpdatedAt = new Date().toISOString()
    if (Object.keys(pending).length === 0) { t.inputRequests = undefined; t.resume?.() }
  }

  cancel (t: Task): void {
    if (this.isTerminal(t)) return
    t.abort.abort()
    this.move(t, 'cancelled', 'Cancelled by client')
    t.resume?.()
  }

  /** Resolves once the task is terminal (2025-11-25 tasks/result). */
  async settled (t: Task): Promise<void> {
    if (this.isTerminal(t)) return
    await new Promise<void>((resolve) => { t.waiters.push(resolve) })
  }

  private move (t: Task, status: TaskStatus, message?: string): void {
    const old = t.status
    t.status = status
    if (message !== undefined) t.statusMessage = message; else delete t.statusMessage
    t.lastUpdatedAt = new Date().toISOString()
    if (status !== 'input_required') t.inputRequests = undefined
    this.bus.emit('TaskStateChanged', { taskId: t.id, oldState: old, newState: status })
    if (TERMINAL.has(status)) for (const w of t.waiters.splice(0)) w()
  }

  private sweep (): void {
    const now = Date.now()
    for (const [id, t] of this.tasks) {
      const stale = Date.parse(t.lastUpdatedAt) + t.ttlMs < now
      if (!stale) continue
      // a task nobody answered within its TTL is cancelled rather than kept forever
      if (t.status === 'input_required') this.cancel(t)
      else if (TERMINAL.has(t.status)) this.tasks.delete(id)
    }
  }

  close (): void {
    clearInterval(this.sweeper)
    for (const t of this.tasks.values()) if (!this.isTerminal(t)) t.abort.abort()
  }
}
