import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import type { Backplane } from '../contracts/index.js'
import type { EventBus } from '../events/index.js'
import { ErrorCode } from './errors.js'
import type { PostgresTasks } from './postgres-tasks.js'
import { keepLeases } from './task-lease-holder.js'
import {
  INTERRUPTED,
  TERMINAL,
  recordOf,
  refresh,
  type Outcome,
  type Runner,
  type Task,
  type TaskRecord,
  type TaskStatus
} from './task-record.js'

export { INTERRUPTED, type Outcome, type Runner, type Task, type TaskRecord, type TaskStatus } from './task-record.js'

/** How often expired tasks are swept. */
const SWEEP_MS = 30_000

/** A store of tasks shared by the nodes (Postgres), and the backplane to the node running each. */
export interface SharedTasks {
  store: PostgresTasks
  backplane: Backplane
  /** Hears a lease renewal or sweep that failed (`what`); the next round retries it. */
  onLeaseError: (err: unknown, what: string) => void
}

const cancelTopic = (node: string): string => `mcp/tasks/cancel/${node}`
const updateTopic = (node: string): string => `mcp/tasks/update/${node}`

/**
 * Tasks of long-running tool calls, for both forms: the 2026-07-28 tasks extension
 * (`io.modelcontextprotocol/tasks`: tasks/get, tasks/update, tasks/cancel) and the 2025-11-25
 * experimental form (tasks/get, tasks/result, tasks/list, tasks/cancel). A task is in the map
 * before its handle is returned, so an immediate tasks/get resolves. Terminal states are absorbing.
 *
 * With `persistIn`, a handed-out task is kept in LMDB: its result outlives a restart, and a task
 * that was still running when the process stopped is failed (`interrupted: server restarted`) at
 * the next start. A call that settles inside the sync window never reaches the database. With
 * `shareIn` they are kept in a store shared by the nodes instead (Postgres): any node reads,
 * lists, awaits and cancels a task, and the node running it is told of cancels and input.
 * There a handed-out task is leased to its node: a killed node's tasks end `interrupted: node lost`,
 * ended once by another node; a node only cut off learns it at its next renewal and stops the run.
 */
export class TaskManager {
  private readonly tasks = new Map<string, Task>()
  private readonly sweeper: NodeJS.Timeout
  private db: Database<TaskRecord, string> | undefined
  private shared: SharedTasks | undefined
  private keeper: { stop(): void } | undefined
  private readonly unsubscribe: (() => void)[] = []
  private onWriteError: (err: unknown) => void = () => {}
  private closed = false

  constructor(
    private readonly bus: EventBus,
    readonly defaultTtlMs: number,
    readonly pollIntervalMs: number
  ) {
    this.sweeper = setInterval(() => {
      this.sweep()
    }, SWEEP_MS)
    this.sweeper.unref()
  }

  /**
   * Keeps handed-out tasks in `db` and loads the ones a previous process left: expired ones are
   * dropped, finished ones restored as they were, unfinished ones failed as interrupted.
   */
  persistIn(db: Database<TaskRecord, string>, onWriteError: (err: unknown) => void): void {
    this.db = db
    this.onWriteError = onWriteError
    const now = Date.now()
    const nowIso = new Date(now).toISOString()
    for (const { key, value } of db.getRange()) {
      if (Date.parse(value.lastUpdatedAt) + value.ttlMs < now) {
        void this.write(() => db.remove(key))
        continue
      }
      const t: Task = { ...value, abort: new AbortController(), waiters: [], durable: true }
      if (!TERMINAL.has(t.status)) {
        t.abort.abort()
        t.status = 'failed'
        t.statusMessage = INTERRUPTED
        t.error = { code: ErrorCode.InternalError, message: INTERRUPTED }
        t.lastUpdatedAt = nowIso
        delete t.inputRequests
        void this.write(() => db.put(key, recordOf(t)))
      }
      this.tasks.set(key, t)
    }
  }

  /**
   * Keeps handed-out tasks in a store shared by the nodes (already started: this node's tasks left
   * running are failed there). A request naming a task another node runs reads it first
   * (`fetch`); its cancel is written to the store and signalled to that node, its input responses
   * are signalled to that node, which holds the run.
   */
  shareIn(shared: SharedTasks, onWriteError: (err: unknown) => void): void {
    this.shared = shared
    this.onWriteError = onWriteError
    this.keeper = keepLeases(this.tasks, shared.store, shared.onLeaseError, this.bus, (t) => this.adopt(t))
    const { backplane } = shared
    const local = (data: unknown): Task | undefined => {
      const id = (data as { id?: unknown } | null)?.id
      const t = typeof id === 'string' ? this.tasks.get(id) : undefined
      return t?.remote === undefined ? t : undefined
    }
    this.unsubscribe.push(
      backplane.subscribe(cancelTopic(backplane.node), (data) => {
        const t = local(data)
        // the store holds the cancel already: the run stops without writing again
        if (t !== undefined && !this.isTerminal(t)) void this.adopt(t)
      }),
      backplane.subscribe(updateTopic(backplane.node), (data) => {
        const t = local(data)
        const responses = (data as { responses?: unknown }).responses
        if (t !== undefined && typeof responses === 'object' && responses !== null && !Array.isArray(responses))
          this.update(t, responses as Record<string, unknown>)
      })
    )
  }

  get isShared(): boolean {
    return this.shared !== undefined
  }

  /**
   * A task of a shared store this node does not run, read (again) before a request that names it
   * is answered; undefined (nothing to wait for) when there is nothing to read.
   */
  fetch(id: unknown): Promise<void> | undefined {
    const shared = this.shared
    if (shared === undefined || typeof id !== 'string') return undefined
    const held = this.tasks.get(id)
    if (held !== undefined && held.remote === undefined) return undefined
    return shared.store.load(id).then((kept) => {
      const copy = this.tasks.get(id)
      if (copy !== undefined && copy.remote === undefined) return
      if (kept === undefined) {
        if (copy !== undefined) this.tasks.delete(id)
        return
      }
      // the same object: a request waiting on it (tasks/result) sees the new state
      if (copy !== undefined) refresh(copy, kept.rec)
      else
        this.tasks.set(id, {
          ...kept.rec,
          abort: new AbortController(),
          waiters: [],
          durable: true,
          remote: { node: kept.node }
        })
    })
  }

  /**
   * Marks a task whose handle is about to be handed out as durable and writes it; resolves once
   * the write is committed, so a client holding the handle finds the task after a crash.
   */
  async keep(t: Task): Promise<void> {
    t.durable = true
    await this.save(t)
  }

  create(principal: string | null, ttlMs = this.defaultTtlMs): Task {
    const now = new Date().toISOString()
    const t: Task = {
      id: `task-${randomUUID()}`,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: this.pollIntervalMs,
      principal,
      abort: new AbortController(),
      waiters: []
    }
    this.tasks.set(t.id, t)
    return t
  }

  /** Drops a task whose call settled inside the sync window: its handle was never handed out. */
  forget(t: Task): void {
    this.tasks.delete(t.id)
  }

  get(id: unknown, principal: string | null): Task | undefined {
    if (typeof id !== 'string') return undefined
    const t = this.tasks.get(id)
    if (t === undefined || (t.principal !== null && t.principal !== principal)) return undefined
    return t
  }

  async list(principal: string | null): Promise<Task[]> {
    if (this.shared !== undefined) {
      const kept = await this.shared.store.list(principal)
      return kept.map((r) => {
        const t = this.tasks.get(r.id)
        return t !== undefined && t.remote === undefined ? t : { ...r, abort: new AbortController(), waiters: [] }
      })
    }
    return [...this.tasks.values()].filter((t) => t.principal === null || t.principal === principal)
  }

  isTerminal(t: Task): boolean {
    return TERMINAL.has(t.status)
  }

  /** Runs the task to a terminal state, pausing in input_required until tasks/update answers every request. */
  async drive(t: Task, runner: Runner, first: Promise<Outcome>): Promise<void> {
    let next = first
    for (;;) {
      let out: Outcome
      try {
        out = await next
      } catch (err) {
        out = { kind: 'error', error: { code: ErrorCode.InternalError, message: (err as Error).message } }
      }
      if (this.isTerminal(t)) return
      if (out.kind === 'complete') {
        t.result = out.result
        this.move(t, 'completed', out.result.isError === true ? 'Tool reported isError=true' : undefined)
        return
      }
      if (out.kind === 'error') {
        t.error = out.error
        this.move(t, 'failed', out.error.message)
        return
      }
      t.inputRequests = out.inputRequests
      t.toolState = out.toolState
      this.move(t, 'input_required')
      await new Promise<void>((resolve) => {
        t.resume = resolve
      })
      t.resume = undefined
      if (this.isTerminal(t)) return
      this.move(t, 'working')
      next = runner(t.gathered, t.toolState, t.abort.signal)
    }
  }

  /** Merges responses; the task resumes once no request is pending. Unknown keys are ignored. */
  update(t: Task, responses: Record<string, unknown>): void {
    if (t.status !== 'input_required' || t.inputRequests === undefined) return
    if (t.remote !== undefined) {
      // the run is on its node: the responses go there
      this.shared?.backplane.publish(updateTopic(t.remote.node), { id: t.id, responses })
      return
    }
    const pending = { ...t.inputRequests }
    t.gathered ??= {}
    for (const [k, v] of Object.entries(responses)) {
      if (k in pending) {
        t.gathered[k] = v
        delete pending[k]
      }
    }
    t.inputRequests = pending
    t.lastUpdatedAt = new Date().toISOString()
    if (Object.keys(pending).length === 0) {
      t.inputRequests = undefined
      t.resume?.()
    } else void this.save(t)
  }

  cancel(t: Task): Promise<void> | undefined {
    if (this.isTerminal(t)) return undefined
    const remote = t.remote
    const shared = this.shared
    if (remote !== undefined && shared !== undefined) {
      // written to the store (the task ends there for every node), then signalled to the node running it
      return shared.store.cancel(t.id, 'Cancelled by client').then((kept) => {
        if (kept === undefined) return
        refresh(t, kept.rec)
        if (kept.canceled) shared.backplane.publish(cancelTopic(remote.node), { id: t.id })
      })
    }
    t.abort.abort()
    this.move(t, 'cancelled', 'Cancelled by client')
    t.resume?.()
    return undefined
  }

  /**
   * A task this node runs ended in the shared store (cancelled on another node): the run stops and
   * the task takes the state the store holds, without writing.
   */
  private async adopt(t: Task): Promise<void> {
    t.abort.abort()
    let kept
    try {
      kept = await this.shared?.store.load(t.id)
    } catch (err) {
      this.onWriteError(err)
      return
    }
    if (kept === undefined) return
    const old = t.status
    refresh(t, kept.rec)
    if (old !== t.status)
      this.bus.emit('TaskStateChanged', { taskId: t.id, oldState: old, newState: t.status, protocol: 'mcp' })
    for (const w of t.waiters.splice(0)) w()
    t.resume?.()
  }

  /** Resolves once the task is terminal (2025-11-25 tasks/result). */
  async settled(t: Task): Promise<void> {
    if (this.isTerminal(t)) return
    if (t.remote !== undefined) {
      // another node runs it: its end is read from the store at the task's poll interval
      while (!this.isTerminal(t) && !this.closed) {
        await new Promise((r) => setTimeout(r, t.pollIntervalMs))
        await this.fetch(t.id)
        const kept = this.tasks.get(t.id)
        if (kept === undefined) return
        if (kept !== t) refresh(t, kept)
      }
      return
    }
    await new Promise<void>((resolve) => {
      t.waiters.push(resolve)
    })
  }

  private move(t: Task, status: TaskStatus, message?: string): void {
    const old = t.status
    t.status = status
    if (message !== undefined) t.statusMessage = message
    else delete t.statusMessage
    t.lastUpdatedAt = new Date().toISOString()
    if (status !== 'input_required') t.inputRequests = undefined
    void this.save(t)
    this.bus.emit('TaskStateChanged', { taskId: t.id, oldState: old, newState: status, protocol: 'mcp' })
    if (TERMINAL.has(status)) for (const w of t.waiters.splice(0)) w()
  }

  /** Writes a durable task; after close nothing is written, so unfinished tasks read as interrupted next start. */
  private async save(t: Task): Promise<void> {
    if (t.durable !== true || this.closed || t.remote !== undefined) return
    const shared = this.shared
    if (shared !== undefined) {
      let written = true
      await this.write(async () => (written = await shared.store.put(recordOf(t))))
      // refused: the task ended in the store (cancelled on another node) before this write
      if (!written) await this.adopt(t)
      return
    }
    const db = this.db
    if (db === undefined) return
    await this.write(() => db.put(t.id, recordOf(t)))
  }

  /** A failed write is reported (logged by the caller of persistIn), never thrown at a task's run. */
  private async write(op: () => Promise<unknown>): Promise<void> {
    try {
      await op()
    } catch (err) {
      this.onWriteError(err)
    }
  }

  private sweep(): void {
    const now = Date.now()
    const shared = this.shared
    if (shared !== undefined) void this.write(() => shared.store.sweep(now))
    for (const [id, t] of this.tasks) {
      // a copy of another node's task is read afresh when asked for: kept only between requests
      if (t.remote !== undefined) {
        if (t.waiters.length === 0) this.tasks.delete(id)
        continue
      }
      const stale = Date.parse(t.lastUpdatedAt) + t.ttlMs < now
      if (!stale) continue
      // a task nobody answered within its TTL is cancelled rather than kept forever
      if (t.status === 'input_required') this.cancel(t)
      else if (TERMINAL.has(t.status)) {
        this.tasks.delete(id)
        const db = this.db
        if (db !== undefined && t.durable === true && !this.closed) void this.write(() => db.remove(id))
      }
    }
  }

  close(): void {
    this.closed = true
    clearInterval(this.sweeper)
    this.keeper?.stop()
    for (const u of this.unsubscribe.splice(0)) u()
    for (const t of this.tasks.values()) if (!this.isTerminal(t)) t.abort.abort()
  }
}
