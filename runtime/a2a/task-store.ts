/**
 * The A2A tasks of this platform, in process memory and bounded: at most `limits.max` at once,
 * at most `perPrincipal` of one principal and `perAddress` of anonymous callers from one address,
 * and anonymous callers together leave `reserve` of the cap to authenticated principals. A caller
 * at its limit makes room by forgetting its own oldest finished task, so only tasks still running
 * refuse a new one; at the anonymous pool or the cap, the oldest finished anonymous task goes
 * (anonymous results are kept as long as there is room), then at the cap the caller's own oldest
 * finished one; another principal's results are kept for their whole retention. A terminal task
 * is otherwise forgotten `retentionMs` after it was created. Every state change is announced on
 * the bus as TaskStateChanged and to the task's streams.
 */
import { randomUUID } from 'node:crypto'
import type { EventBus } from '../events/index.js'
import { PlatformError } from '../contracts/index.js'
import { OwnerQuota, addressBucket, type OwnerLimits, type OwnerRefusal, type QuotaOwner } from '../http/index.js'
import { A2A_ERRORS } from './errors.js'
import {
  TERMINAL_STATES,
  type Artifact,
  type Message,
  type StreamResponse,
  type Task,
  type TaskState
} from './a2a-types.js'
import { invalidParams } from './rpc-error.js'

export interface TaskRecord {
  readonly id: string
  readonly contextId: string
  /** The agent whose endpoint created it; another agent's endpoint does not see it. */
  readonly agent: string
  /** The principal that created it (`anonymous` without one). */
  readonly owner: string
  /** Whom it is counted against: its principal, or null and (anonymous) the client's address bucket. */
  readonly caller: QuotaOwner
  readonly createdAt: number
  /** Creation order, the tie-break of the listing order. */
  readonly seq: number
  state: TaskState
  statusMessage: Message | undefined
  updatedAt: number
  readonly history: Message[]
  readonly artifacts: Artifact[]
  readonly metadata: Record<string, unknown>
  /** Aborting it cancels the turn the task runs. */
  readonly abort: AbortController
  readonly listeners: Set<(e: StreamResponse) => void>
  readonly waiters: (() => void)[]
}

/**
 * Who asks: a principal sees its own tasks, or every task when `all` (its role allows it). An
 * anonymous caller lists none: it reads an anonymous task only by its id, which only the caller
 * that created it was told, since anonymous callers cannot be told apart otherwise.
 */
export interface Viewer {
  principal: string | null
  all: boolean
}

export interface ListQuery {
  agent: string
  viewer: Viewer
  contextId?: string
  status?: TaskState
  /** Epoch ms: only tasks updated at or after it. */
  after?: number
  pageSize: number
  pageToken?: string
}

export interface ListPage {
  tasks: TaskRecord[]
  nextPageToken: string
  pageSize: number
  totalSize: number
}

export interface TaskStoreOptions {
  bus: EventBus
  limits: OwnerLimits
  retentionMs: number
  now?: () => number
  /** Told every event a task's streams are sent (push notifications follow them). */
  onEvent?: (t: TaskRecord, e: StreamResponse) => void
  /** Told when a task is forgotten (what is kept about it goes with it). */
  onForget?: (t: TaskRecord) => void
}

/** States a cancel request may leave. */
const CANCELABLE: ReadonlySet<TaskState> = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'])

const KEYS = {
  server: 'platform.a2a.max-tasks',
  principal: 'platform.a2a.tasks.max-per-principal',
  address: 'platform.a2a.tasks.max-per-address',
  anonymous: 'platform.a2a.tasks.authenticated-reserve'
} as const

/** The key of a caller's own finished tasks. */
const ownerKey = (c: QuotaOwner): string => (c.principal !== null ? `p ${c.principal}` : `a ${c.address ?? ''}`)

export class TaskStore {
  private readonly tasks = new Map<string, TaskRecord>()
  private readonly quota: OwnerQuota
  /** Each caller's finished tasks, oldest finished first: what makes room for its next one. */
  private readonly finished = new Map<string, Set<TaskRecord>>()
  /** Finished anonymous tasks, oldest finished first: what makes room at the anonymous pool and the cap. */
  private readonly finishedAnonymous = new Set<TaskRecord>()
  private seq = 0
  private readonly now: () => number
  private readonly timer: NodeJS.Timeout

  constructor(private readonly opts: TaskStoreOptions) {
    this.now = opts.now ?? Date.now
    this.quota = new OwnerQuota(opts.limits, KEYS)
    // a sweep now and then, so memory is given back even when no one creates or lists tasks
    this.timer = setInterval(() => this.sweep(), Math.min(30_000, Math.max(1_000, opts.retentionMs / 5)))
    this.timer.unref()
  }

  get size(): number {
    return this.tasks.size
  }

  /**
   * A new SUBMITTED task of `principal` (null: anonymous, counted by `address`) holding `message`
   * as its first history entry. Past a limit a finished task makes room; while none has finished
   * it throws A2A_TASK_QUOTA (the caller's own limit) or A2A_TASK_CAPACITY, and nothing changes.
   */
  create(
    agent: string,
    principal: string | null,
    address: string | undefined,
    contextId: string | undefined,
    message: Message
  ): TaskRecord {
    const caller: QuotaOwner =
      principal !== null
        ? { principal }
        : address !== undefined
          ? { principal, address: addressBucket(address) }
          : { principal }
    this.admit(caller)
    const at = this.now()
    const id = randomUUID()
    const ctx = contextId ?? randomUUID()
    const t: TaskRecord = {
      id,
      contextId: ctx,
      agent,
      owner: principal ?? 'anonymous',
      caller,
      createdAt: at,
      seq: ++this.seq,
      state: 'TASK_STATE_SUBMITTED',
      statusMessage: undefined,
      updatedAt: at,
      history: [{ ...message, taskId: id, contextId: ctx }],
      artifacts: [],
      metadata: {},
      abort: new AbortController(),
      listeners: new Set(),
      waiters: []
    }
    this.tasks.set(id, t)
    this.quota.add(caller)
    return t
  }

  /** Makes room for one more task of `caller`, or throws the refusal of the limit that has none. */
  private admit(caller: QuotaOwner): void {
    const own = this.quota.check(caller)
    if (own !== undefined && !this.recycle(this.finished.get(ownerKey(caller)))) throw refusal(own)
    if (caller.principal === null && this.quota.anonymousFull && !this.recycle(this.finishedAnonymous))
      throw refusal(this.quota.refusal('anonymous'))
    if (this.tasks.size < this.opts.limits.max) return
    this.sweep()
    if (this.tasks.size < this.opts.limits.max || this.recycle(this.finishedAnonymous)) return
    // at the cap a caller may still give up its own finished task: no one else's result is lost
    if (!this.recycle(this.finished.get(ownerKey(caller)))) throw refusal(this.quota.refusal('server'))
  }

  /** Forgets the oldest of `finished`; false when there is none. */
  private recycle(finished: Set<TaskRecord> | undefined): boolean {
    const oldest = finished?.values().next().value
    if (oldest === undefined) return false
    this.forget(oldest)
    return true
  }

  private forget(t: TaskRecord): void {
    if (!this.tasks.delete(t.id)) return
    this.quota.remove(t.caller)
    const key = ownerKey(t.caller)
    const own = this.finished.get(key)
    if (own?.delete(t) === true && own.size === 0) this.finished.delete(key)
    this.finishedAnonymous.delete(t)
    this.opts.onForget?.(t)
  }

  /** A task by id, whoever owns it (the admin view); undefined when unknown or evicted. */
  get(id: string): TaskRecord | undefined {
    const t = this.tasks.get(id)
    if (t !== undefined && this.expired(t)) {
      this.forget(t)
      return undefined
    }
    return t
  }

  /** A task as one caller of one agent's endpoint may see it by its id; anything else is unknown to it. */
  visible(id: string, agent: string, viewer: Viewer): TaskRecord | undefined {
    const t = this.get(id)
    return t !== undefined && t.agent === agent && canSee(t, viewer, true) ? t : undefined
  }

  /** Moves a task to `state` (a terminal state is final), tells the bus and the task's streams. */
  move(t: TaskRecord, state: TaskState, message?: Message): void {
    if (TERMINAL_STATES.has(t.state)) return
    const old = t.state
    t.state = state
    t.statusMessage = message
    t.updatedAt = this.now()
    if (old !== state)
      this.opts.bus.emit('TaskStateChanged', { taskId: t.id, oldState: old, newState: state, protocol: 'a2a' })
    this.publish(t, { statusUpdate: { taskId: t.id, contextId: t.contextId, status: statusOf(t) } })
    if (TERMINAL_STATES.has(state)) {
      this.finish(t)
      for (const w of t.waiters.splice(0)) w()
      t.listeners.clear()
    }
  }

  private finish(t: TaskRecord): void {
    if (!this.tasks.has(t.id)) return
    const key = ownerKey(t.caller)
    const own = this.finished.get(key)
    if (own === undefined) this.finished.set(key, new Set([t]))
    else own.add(t)
    if (t.caller.principal === null) this.finishedAnonymous.add(t)
  }

  /** Sends one event to every stream open on the task. */
  publish(t: TaskRecord, e: StreamResponse): void {
    for (const l of t.listeners) l(e)
    this.opts.onEvent?.(t, e)
  }

  /** Cancels a SUBMITTED or WORKING task and its turn; false when its state does not allow it. */
  cancel(t: TaskRecord): boolean {
    if (!CANCELABLE.has(t.state)) return false
    this.move(t, 'TASK_STATE_CANCELED', agentMessage(t, 'Canceled by request'))
    t.abort.abort()
    return true
  }

  /** Resolves once the task is terminal. */
  async settled(t: TaskRecord): Promise<void> {
    if (TERMINAL_STATES.has(t.state)) return
    await new Promise<void>((resolve) => t.waiters.push(resolve))
  }

  /** Most recently updated first, filtered and paged by an opaque cursor. */
  list(q: ListQuery): ListPage {
    this.sweep()
    const cursor = q.pageToken === undefined || q.pageToken === '' ? undefined : parseToken(q.pageToken)
    const matching: TaskRecord[] = []
    for (const t of this.tasks.values()) {
      if (t.agent !== q.agent || !canSee(t, q.viewer, false)) continue
      if (q.contextId !== undefined && t.contextId !== q.contextId) continue
      if (q.status !== undefined && t.state !== q.status) continue
      if (q.after !== undefined && t.updatedAt < q.after) continue
      matching.push(t)
    }
    matching.sort((a, b) => b.updatedAt - a.updatedAt || b.seq - a.seq)
    let from = 0
    if (cursor !== undefined) {
      from = matching.findIndex((t) => t.updatedAt < cursor[0] || (t.updatedAt === cursor[0] && t.seq < cursor[1]))
      if (from < 0) from = matching.length
    }
    const tasks = matching.slice(from, from + q.pageSize)
    const last = tasks.at(-1)
    const more = from + q.pageSize < matching.length && last !== undefined
    return {
      tasks,
      nextPageToken: more ? tokenOf(last) : '',
      pageSize: q.pageSize,
      totalSize: matching.length
    }
  }

  /** Every task kept, newest first (the admin view), optionally of one context. */
  all(contextId?: string): TaskRecord[] {
    this.sweep()
    const out: TaskRecord[] = []
    for (const t of this.tasks.values()) if (contextId === undefined || t.contextId === contextId) out.push(t)
    return out.reverse()
  }

  /** Forgets the terminal tasks past their retention. */
  sweep(): void {
    for (const t of this.tasks.values()) if (this.expired(t)) this.forget(t)
  }

  /** Cancels the turns still running (the platform is closing) and stops the sweeper. */
  close(): void {
    clearInterval(this.timer)
    for (const t of this.tasks.values()) this.cancel(t)
  }

  private expired(t: TaskRecord): boolean {
    return TERMINAL_STATES.has(t.state) && this.now() - t.createdAt >= this.opts.retentionMs
  }
}

function canSee(t: TaskRecord, v: Viewer, byId: boolean): boolean {
  if (v.all) return true
  if (t.caller.principal === null) return byId && v.principal === null
  return t.caller.principal === v.principal
}

function refusal(r: OwnerRefusal): PlatformError {
  const data = { limit: String(r.limit), key: r.key, scope: r.scope }
  if (r.scope === 'server' || r.scope === 'anonymous')
    return new PlatformError(A2A_ERRORS.A2A_TASK_CAPACITY, { ...r }, { data })
  const who = r.scope === 'principal' ? `principal '${r.of ?? ''}'` : `anonymous callers at ${r.of ?? ''}`
  return new PlatformError(A2A_ERRORS.A2A_TASK_QUOTA, { ...r, who }, { data })
}

function tokenOf(t: TaskRecord): string {
  return Buffer.from(`${t.updatedAt}:${t.seq}`).toString('base64url')
}

function parseToken(token: string): [number, number] {
  const m = /^(\d+):(\d+)$/.exec(Buffer.from(token, 'base64url').toString())
  if (m === null) throw invalidParams(`pageToken '${token}' is not a token this server gave`)
  return [Number(m[1]), Number(m[2])]
}

/** A message from the agent about a task (status messages, the answer in the history). */
export function agentMessage(t: TaskRecord, text: string): Message {
  return { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }], contextId: t.contextId, taskId: t.id }
}

export function statusOf(t: TaskRecord): Task['status'] {
  return {
    state: t.state,
    ...(t.statusMessage !== undefined ? { message: t.statusMessage } : {}),
    timestamp: new Date(t.updatedAt).toISOString()
  }
}

/**
 * The task as the wire shows it. `historyLength` 0 leaves the history out, a positive one keeps
 * that many newest messages; artifacts are left out when `includeArtifacts` is false.
 */
export function taskJson(t: TaskRecord, historyLength?: number, includeArtifacts = true): Task {
  const out: Task = { id: t.id, contextId: t.contextId, status: statusOf(t) }
  if (includeArtifacts) out.artifacts = t.artifacts
  if (historyLength === undefined) out.history = t.history
  else if (historyLength > 0) out.history = t.history.slice(-historyLength)
  if (Object.keys(t.metadata).length > 0) out.metadata = t.metadata
  return out
}
