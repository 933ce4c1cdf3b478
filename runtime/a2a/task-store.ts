/**
 * The A2A tasks of this platform: kept in a task store (`A2aTaskRecords`: memory, LMDB, or
 * Postgres shared by every node), run on the node that created them. The running node holds the
 * live part (the turn's abort, the open streams, the waiters), writes every state change to the
 * store before announcing it, and publishes each stream event on the backplane topic
 * `a2a/tasks/<id>`, so a stream opened on another node follows it. A cancel made on another node is
 * written to the store (the task ends there at once) and signalled to the running node on its
 * topic `a2a/cancel/<node>`; a signal lost on the way is found by that node's next write, which the
 * store refuses because the task has ended. Every state change is announced on the bus as
 * TaskStateChanged.
 *
 * With a store several nodes share, the running node holds a lease on each of its tasks and renews
 * them three times per lease; twice per lease every node ends the tasks whose lease expired (their
 * node was killed or cut off) FAILED `interrupted: node lost`, once, and tells their streams on every
 * node. A node that was only cut off learns at its next renewal or write that its task ended, and
 * stops the turn without writing.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Backplane } from '../contracts/index.js'
import type { EventBus } from '../events/index.js'
import { addressBucket, type QuotaOwner } from '../http/index.js'
import { TaskLeaseKeeper, type TaskLeaseHolder } from '../store/index.js'
import type { Message, StreamResponse, TaskState } from './a2a-types.js'
import { statusOf } from './task-json.js'
import {
  CANCELABLE,
  agentMessage,
  canSee,
  ended,
  isTerminal,
  type A2aTaskRecords,
  type Canceled,
  type ListPage,
  type ListQuery,
  type LostTask,
  type PushConfig,
  type TaskRecord,
  type Viewer
} from './task-records.js'

export { agentMessage, type TaskRecord, type Viewer, type ListQuery, type ListPage } from './task-records.js'
export { statusOf, taskJson } from './task-json.js'

/** A task this node runs: its record as the run changes it, and what exists only in this process. */
export interface LiveTask {
  rec: TaskRecord
  /** Aborting it cancels the turn the task runs. */
  readonly abort: AbortController
  readonly listeners: Set<(e: StreamResponse) => void>
  readonly waiters: (() => void)[]
  /** The store's writes of this task, one after another. */
  writing: Promise<unknown>
}

export type TaskListener = (e: StreamResponse) => void

export interface TaskStoreOptions {
  records: A2aTaskRecords
  bus: EventBus
  backplane: Backplane
  logger: Logger
  retentionMs: number
  now?: () => number
  /** Told every event a task's streams are sent, on the node running it (push notifications follow them). */
  onEvent?: (t: TaskRecord, e: StreamResponse) => void
}

/** How often a node asks the store whether the tasks its streams follow on other nodes have ended. */
const FOLLOW_CHECK_MS = 2000

const taskTopic = (id: string): string => `a2a/tasks/${id}`
const cancelTopic = (node: string): string => `a2a/cancel/${node}`

export class TaskStore {
  private readonly live = new Map<string, LiveTask>()
  /** Tasks of other nodes followed by streams here: one backplane subscription each, however many streams. */
  private readonly followed = new Map<string, { listeners: Set<TaskListener>; unsubscribe: () => void }>()
  private readonly now: () => number
  private readonly timers: NodeJS.Timeout[] = []
  private unsubscribeCancel: (() => void) | undefined
  private keeper: TaskLeaseKeeper<LostTask> | undefined

  constructor(private readonly opts: TaskStoreOptions) {
    this.now = opts.now ?? Date.now
  }

  get records(): A2aTaskRecords {
    return this.opts.records
  }

  /** Opens the store (failing this node's tasks left running) and listens for cancels made elsewhere. */
  async start(): Promise<number> {
    const marked = await this.opts.records.start()
    const { backplane } = this.opts
    this.unsubscribeCancel = backplane.subscribe(cancelTopic(backplane.node), (data) => {
      const id = (data as { id?: unknown } | null)?.id
      const l = typeof id === 'string' ? this.live.get(id) : undefined
      if (l !== undefined) void this.endFrom(l)
    })
    const every = Math.min(30_000, Math.max(1_000, this.opts.retentionMs / 5))
    // a sweep now and then, so room is given back even when no one creates or lists tasks
    this.timers.push(setInterval(() => void this.quietly(this.opts.records.sweep(this.now()), 'sweep'), every))
    this.timers.push(setInterval(() => void this.checkFollowed(), FOLLOW_CHECK_MS))
    for (const t of this.timers) t.unref()
    const leases = this.opts.records.leases
    if (leases !== undefined)
      this.keeper = new TaskLeaseKeeper(leases, this.leaseHolder(), (err, what) =>
        this.opts.logger.warn({ err }, `A2A tasks: ${what}; retrying`)
      )
    return marked
  }

  /** The tasks kept (for a shared store: as of this node's last create or sweep). */
  get size(): number {
    return this.opts.records.size
  }

  /**
   * A new SUBMITTED task of `principal` (null: anonymous, counted by `address`) holding `message`
   * as its first history entry, run by this node. Past a limit a finished task makes room; while
   * none has finished it throws A2A_TASK_QUOTA or A2A_TASK_CAPACITY, and nothing changes.
   */
  async create(
    agent: string,
    principal: string | null,
    address: string | undefined,
    contextId: string | undefined,
    message: Message,
    extra: { metadata?: Record<string, unknown>; push?: Omit<PushConfig, 'taskId' | 'id'> & { id?: string } } = {}
  ): Promise<LiveTask> {
    const caller: QuotaOwner =
      principal !== null
        ? { principal }
        : address !== undefined
          ? { principal, address: addressBucket(address) }
          : { principal }
    const at = this.now()
    const id = randomUUID()
    const ctx = contextId ?? randomUUID()
    const rec = await this.opts.records.create(
      {
        id,
        contextId: ctx,
        agent,
        owner: principal ?? 'anonymous',
        caller,
        node: this.opts.backplane.node,
        createdAt: at,
        state: 'TASK_STATE_SUBMITTED',
        updatedAt: at,
        history: [{ ...message, taskId: id, contextId: ctx }],
        artifacts: [],
        metadata: { ...extra.metadata },
        // a config given without an id (A2A 0.3) takes the task's
        push: extra.push === undefined ? [] : [{ ...extra.push, id: extra.push.id ?? id, taskId: id, created: at }]
      },
      at
    )
    const l: LiveTask = {
      rec,
      abort: new AbortController(),
      listeners: new Set(),
      waiters: [],
      writing: Promise.resolve()
    }
    this.live.set(id, l)
    return l
  }

  /** The task this node runs, if it runs it. */
  running(id: string): LiveTask | undefined {
    return this.live.get(id)
  }

  /** A task by id, whoever owns it (the admin view); undefined when unknown or past its retention. */
  async get(id: string): Promise<TaskRecord | undefined> {
    return this.live.get(id)?.rec ?? (await this.opts.records.get(id, this.now()))
  }

  /** A task as one caller of one agent's endpoint may see it by its id; anything else is unknown to it. */
  async visible(id: string, agent: string, viewer: Viewer): Promise<TaskRecord | undefined> {
    const t = await this.get(id)
    return t !== undefined && t.agent === agent && canSee(t, viewer, true) ? t : undefined
  }

  /**
   * Moves a task this node runs to `state` (a terminal state is final): told to the bus, written to
   * the store, told to the task's streams (a terminal state after the write). A write the store
   * refuses (the task was ended from another node) stops the run with the end the store holds.
   */
  async move(l: LiveTask, state: TaskState, message?: Message): Promise<void> {
    if (isTerminal(l.rec)) return
    const old = l.rec.state
    l.rec = ended(l.rec, state, message, this.now())
    if (old !== state)
      this.opts.bus.emit('TaskStateChanged', { taskId: l.rec.id, oldState: old, newState: state, protocol: 'a2a' })
    const terminal = isTerminal(l.rec)
    const update: StreamResponse = {
      statusUpdate: { taskId: l.rec.id, contextId: l.rec.contextId, status: statusOf(l.rec) }
    }
    // a state on the way is told at once; the end only once the store holds it, so whoever hears it
    // on any node and reads the task finds it ended
    if (!terminal) this.publish(l, update)
    const snapshot = structuredClone(l.rec)
    const write = l.writing.then(() => this.opts.records.update(snapshot))
    l.writing = write.catch(() => {})
    let out: Awaited<typeof write>
    try {
      out = await write
    } catch (err) {
      // the run goes on and its streams hear it; the store shows the last state it took
      this.opts.logger.warn({ err, taskId: l.rec.id, state }, 'A2A task: the task store refused a write')
      out = undefined
    }
    if (out !== undefined && !out.written && l.rec.state === state) {
      await this.adopt(l, out.task)
      return
    }
    if (out !== undefined) l.rec.push = out.task.push
    if (terminal) {
      this.publish(l, update)
      this.finish(l)
    }
  }

  /** Sends one event to every stream of the task, here and on the other nodes. */
  publish(l: LiveTask, e: StreamResponse): void {
    for (const fn of l.listeners) fn(e)
    this.opts.backplane.publish(taskTopic(l.rec.id), e)
    this.opts.onEvent?.(l.rec, e)
  }

  /** The kept task ended while this node ran it (a cancel from another node): the run stops with that end. */
  private async adopt(l: LiveTask, kept: TaskRecord): Promise<void> {
    if (this.live.get(l.rec.id) !== l) return
    l.abort.abort()
    l.rec = { ...kept, history: l.rec.history, artifacts: l.rec.artifacts }
    const e: StreamResponse = { statusUpdate: { taskId: kept.id, contextId: kept.contextId, status: statusOf(kept) } }
    // the node that canceled it told the other nodes' streams already
    for (const fn of l.listeners) fn(e)
    this.opts.onEvent?.(l.rec, e)
    this.finish(l)
  }

  /** A cancel signal for a task this node runs: the store's end (if it has one) becomes the run's. */
  private async endFrom(l: LiveTask): Promise<void> {
    const kept = await this.quietly(this.opts.records.get(l.rec.id, this.now()), 'read')
    if (kept !== undefined && isTerminal(kept)) await this.adopt(l, kept)
  }

  private leaseHolder(): TaskLeaseHolder<LostTask> {
    return {
      // a task whose terminal write is in flight is left to that write
      running: () => [...this.live.values()].filter((l) => !isTerminal(l.rec)).map((l) => l.rec.id),
      lostHere: async (id) => {
        const l = this.live.get(id)
        if (l !== undefined && !isTerminal(l.rec)) await this.endFrom(l)
      },
      ended: (lost) => this.lost(lost)
    }
  }

  /** A task of a lost node ended by this node: told on the bus, to its streams everywhere, to its push configs. */
  private async lost({ task: t, from }: LostTask): Promise<void> {
    this.opts.logger.warn({ taskId: t.id, node: t.node }, 'A2A task of a lost node marked failed')
    this.opts.bus.emit('TaskStateChanged', { taskId: t.id, oldState: from, newState: t.state, protocol: 'a2a' })
    const e: StreamResponse = { statusUpdate: { taskId: t.id, contextId: t.contextId, status: statusOf(t) } }
    this.opts.backplane.publish(taskTopic(t.id), e)
    // this node's own task, its lease lapsed while it was paused: the run stops with the end written
    const l = this.live.get(t.id)
    if (l !== undefined) {
      await this.adopt(l, t)
      return
    }
    for (const fn of [...(this.followed.get(t.id)?.listeners ?? [])]) fn(e)
    // the push subscribers hear the end from the node that wrote it: the task's own node cannot
    this.opts.onEvent?.(t, e)
  }

  private finish(l: LiveTask): void {
    if (this.live.get(l.rec.id) !== l) return
    this.live.delete(l.rec.id)
    for (const w of l.waiters.splice(0)) w()
    l.listeners.clear()
  }

  /**
   * Cancels a SUBMITTED or WORKING task and its turn, wherever it runs; undefined when unknown,
   * `canceled: false` when its state does not allow it.
   */
  async cancel(id: string): Promise<Canceled | undefined> {
    const l = this.live.get(id)
    if (l !== undefined) {
      const from = l.rec.state
      if (!CANCELABLE.has(from)) return { task: l.rec, canceled: false, from }
      const moved = this.move(l, 'TASK_STATE_CANCELED', agentMessage(l.rec, 'Canceled by request'))
      l.abort.abort()
      await moved
      return { task: l.rec, canceled: l.rec.state === 'TASK_STATE_CANCELED', from }
    }
    const now = this.now()
    const out = await this.opts.records.cancel(id, 'Canceled by request', now)
    if (out === undefined || !out.canceled) return out
    const t = out.task
    this.opts.bus.emit('TaskStateChanged', {
      taskId: id,
      oldState: out.from,
      newState: 'TASK_STATE_CANCELED',
      protocol: 'a2a'
    })
    const e: StreamResponse = { statusUpdate: { taskId: id, contextId: t.contextId, status: statusOf(t) } }
    for (const fn of this.followed.get(id)?.listeners ?? []) fn(e)
    this.opts.backplane.publish(taskTopic(id), e)
    this.opts.backplane.publish(cancelTopic(t.node), { id })
    return out
  }

  /**
   * Calls `listener` with every event of the task from now on, wherever it runs; returns the
   * unfollow. A task of another node is followed through one backplane subscription per task.
   */
  follow(id: string, listener: TaskListener): () => void {
    const l = this.live.get(id)
    if (l !== undefined) {
      l.listeners.add(listener)
      return () => l.listeners.delete(listener)
    }
    let f = this.followed.get(id)
    if (f === undefined) {
      const listeners = new Set<TaskListener>()
      const unsubscribe = this.opts.backplane.subscribe(taskTopic(id), (data) => {
        if (typeof data !== 'object' || data === null) return
        for (const fn of listeners) fn(data as StreamResponse)
      })
      f = { listeners, unsubscribe }
      this.followed.set(id, f)
    }
    const entry = f
    entry.listeners.add(listener)
    return () => {
      entry.listeners.delete(listener)
      if (entry.listeners.size > 0 || this.followed.get(id) !== entry) return
      entry.unsubscribe()
      this.followed.delete(id)
    }
  }

  /**
   * Streams of tasks on other nodes hear the end from the store too: a terminal event lost while
   * the backplane was out of reach, or sent before the subscription took effect, ends them late,
   * never not at all.
   */
  private async checkFollowed(): Promise<void> {
    for (const [id, f] of [...this.followed]) {
      const t = await this.quietly(this.opts.records.get(id, this.now()), 'read')
      if (t === undefined || !isTerminal(t)) continue
      const e: StreamResponse = { statusUpdate: { taskId: id, contextId: t.contextId, status: statusOf(t) } }
      for (const fn of [...f.listeners]) fn(e)
    }
  }

  /** Resolves once the task is terminal. */
  async settled(l: LiveTask): Promise<void> {
    if (this.live.get(l.rec.id) !== l) return
    await new Promise<void>((resolve) => l.waiters.push(resolve))
  }

  /** Most recently updated first, filtered and paged by an opaque cursor. */
  async list(q: ListQuery): Promise<ListPage> {
    const page = await this.opts.records.list(q, this.now())
    return { ...page, tasks: page.tasks.map((t) => this.live.get(t.id)?.rec ?? t) }
  }

  /** Every task kept, newest first (the admin view), optionally of one context. */
  async all(contextId?: string): Promise<TaskRecord[]> {
    return (await this.opts.records.all(contextId, this.now())).map((t) => this.live.get(t.id)?.rec ?? t)
  }

  /** Cancels the turns this node still runs (the platform is closing) and stops the timers. */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t)
    this.keeper?.stop()
    this.unsubscribeCancel?.()
    for (const f of this.followed.values()) f.unsubscribe()
    this.followed.clear()
    await Promise.all([...this.live.keys()].map((id) => this.quietly(this.cancel(id), 'cancel')))
  }

  private async quietly<T>(p: Promise<T>, what: string): Promise<T | undefined> {
    try {
      return await p
    } catch (err) {
      this.opts.logger.warn({ err }, `A2A tasks: a ${what} of the task store failed`)
      return undefined
    }
  }
}
