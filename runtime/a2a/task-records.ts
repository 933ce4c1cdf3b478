/**
 * Where A2A tasks are kept: the contract every task store meets (memory, LMDB, Postgres, one
 * shared contract suite) and the rules they share. A store keeps the task as data (its state,
 * history, artifacts, metadata and push notification configs); the turn running it, its abort
 * and its open streams live on the node that runs it (`TaskStore`).
 *
 * Bounds: at most `limits.max` tasks, `perPrincipal` of one principal, `perAddress` of anonymous
 * callers from one address, and anonymous callers together leave `reserve` of the cap to
 * authenticated principals. A caller at its limit makes room by forgetting its own oldest finished
 * task, so only tasks still running refuse a new one; at the anonymous pool or the cap the oldest
 * finished anonymous task goes, then at the cap the caller's own oldest finished one. A terminal
 * task is otherwise forgotten `retentionMs` after it was created.
 */
import { randomUUID } from 'node:crypto'
import { PlatformError } from '../contracts/index.js'
import type { OwnerLimits, OwnerRefusal, QuotaOwner } from '../http/index.js'
import type { LeasedTasks } from '../store/index.js'
import { TERMINAL_STATES, type Artifact, type Message, type TaskState } from './a2a-types.js'
import { A2A_ERRORS } from './errors.js'
import { invalidParams } from './rpc-error.js'

/** One push notification config as this server keeps it; `version` is the protocol version that created it. */
export interface PushConfig {
  id: string
  taskId: string
  url: string
  token?: string
  authentication?: { scheme: string; credentials: string }
  version: '1.0' | '0.3'
  /** Its creation number among its task's configs (a replacement keeps it): what a page token points after. */
  created?: number
}

export interface PushLimits {
  perTask: number
  perCaller: number
}

/** A task as kept: plain data, the same on every node. */
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
  /** Creation order (given by the store), the tie-break of the listing order. */
  readonly seq: number
  /** The node running its turn: a cancel made elsewhere is signalled there. */
  readonly node: string
  state: TaskState
  statusMessage?: Message | undefined
  updatedAt: number
  /** When it reached a terminal state: the order finished tasks make room in. */
  endedAt?: number
  history: Message[]
  artifacts: Artifact[]
  metadata: Record<string, unknown>
  push: PushConfig[]
}

export type NewTask = Omit<TaskRecord, 'seq'>

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

/** The answer to the running node's write: what the store holds after it. */
export interface Written {
  task: TaskRecord
  /** False when the store refused it: the task had ended already (canceled from another node). */
  written: boolean
}

export interface Canceled {
  task: TaskRecord
  /** False when the task's state does not allow a cancel (it has ended). */
  canceled: boolean
  /** The state it was canceled from. */
  from: TaskState
}

export interface TaskRecordsOptions {
  /** This node: `start()` marks only the tasks it was running. */
  node: string
  limits: OwnerLimits
  retentionMs: number
  push: PushLimits
  /** How long a node owns a running task it stops renewing, for a store several nodes share (default 5000). */
  leaseMs?: number
}

/** A task of a lost node, ended by the node that found its lease expired. */
export interface LostTask {
  task: TaskRecord
  /** The state it was in when its node was lost. */
  from: TaskState
}

/**
 * Leases of a store several nodes share: the node running a task owns it until `leaseMs` after its
 * last renewal or write, on the database's clock. A node that dies (or is cut off) stops renewing,
 * and another node ends its tasks FAILED `interrupted: node lost`. A lost task is never taken
 * over, only ended, so the terminal state itself fences the old owner: the store refuses every
 * write of a task that has ended.
 */
export type TaskLeases = LeasedTasks<LostTask>

export interface A2aTaskRecords {
  readonly kind: 'memory' | 'lmdb' | 'postgres'
  /** Opens the store and fails this node's tasks still running when it stopped; resolves to their number. */
  start(): Promise<number>
  stop(): Promise<void>
  /** Whether the store can be reached now (readiness). */
  available(): boolean
  /** The tasks kept, as of the last write or sweep of this node. */
  readonly size: number
  /** Keeps a new task after making room for it; throws A2A_TASK_QUOTA or A2A_TASK_CAPACITY, changing nothing. */
  create(t: NewTask, now: number): Promise<TaskRecord>
  /** The task, or undefined when unknown or past its retention. */
  get(id: string, now: number): Promise<TaskRecord | undefined>
  /** The running node's write of state, status, history, artifacts and metadata; refused once the task ended. */
  update(t: TaskRecord): Promise<Written | undefined>
  /** Moves a SUBMITTED or WORKING task to CANCELED, its status message the agent's `text`; undefined when unknown. */
  cancel(id: string, text: string, now: number): Promise<Canceled | undefined>
  /** Most recently updated first, filtered and paged by an opaque cursor. */
  list(q: ListQuery, now: number): Promise<ListPage>
  /** Every task kept, newest first (the admin view), optionally of one context. */
  all(contextId: string | undefined, now: number): Promise<TaskRecord[]>
  /** Adds or replaces a push config of a task; -32602 past a limit; undefined when the task is unknown. */
  setPush(config: PushConfig): Promise<PushConfig | undefined>
  /** Removes a push config; false when the task has none of that id. */
  deletePush(taskId: string, id: string): Promise<boolean>
  /** The push configs a caller (as `callerKey` names it) keeps over all its tasks. */
  pushCount(owner: string): Promise<number>
  /** Forgets the terminal tasks past their retention. */
  sweep(now: number): Promise<void>
  /** A store several nodes share has leases; one node's own store (memory, LMDB) none: its restart ends its tasks. */
  readonly leases: TaskLeases | undefined
}

export const CANCELABLE: ReadonlySet<TaskState> = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'])

/** What a task that was running when its node stopped says. */
export const INTERRUPTED = 'interrupted: server restarted'

/** What a task says whose node stopped renewing its lease (killed, or cut off from the database). */
export const NODE_LOST = 'interrupted: node lost'

const KEYS = {
  server: 'platform.a2a.max-tasks',
  principal: 'platform.a2a.tasks.max-per-principal',
  address: 'platform.a2a.tasks.max-per-address',
  anonymous: 'platform.a2a.tasks.authenticated-reserve'
} as const

export const QUOTA_KEYS = KEYS

/** The key of a caller's own tasks (`p <principal>` or `a <address bucket>`). */
export const ownerKey = (c: QuotaOwner): string => (c.principal !== null ? `p ${c.principal}` : `a ${c.address ?? ''}`)

/** Whom a task's push configs are counted against: its principal, or its anonymous address. */
export function callerKey(c: QuotaOwner): string {
  return c.principal !== null ? c.principal : `anonymous ${c.address ?? ''}`
}

/** The refusal of an owner's own limit, or undefined when its count `n` fits. */
export function ownLimit(c: QuotaOwner, n: number, limits: OwnerLimits): OwnerRefusal | undefined {
  if (c.principal !== null) return n >= limits.perPrincipal ? refusalOf('principal', limits, c.principal) : undefined
  if (c.address !== undefined) return n >= limits.perAddress ? refusalOf('address', limits, c.address) : undefined
  return undefined
}

export function refusalOf(scope: OwnerRefusal['scope'], l: OwnerLimits, of?: string): OwnerRefusal {
  const limit = {
    server: l.max,
    anonymous: Math.max(0, l.max - l.reserve),
    principal: l.perPrincipal,
    address: l.perAddress
  }[scope]
  return of === undefined ? { scope, limit, key: KEYS[scope] } : { scope, limit, key: KEYS[scope], of }
}

export function refusal(r: OwnerRefusal): PlatformError {
  const data = { limit: String(r.limit), key: r.key, scope: r.scope }
  if (r.scope === 'server' || r.scope === 'anonymous')
    return new PlatformError(A2A_ERRORS.A2A_TASK_CAPACITY, { ...r }, { data })
  const who = r.scope === 'principal' ? `principal '${r.of ?? ''}'` : `anonymous callers at ${r.of ?? ''}`
  return new PlatformError(A2A_ERRORS.A2A_TASK_QUOTA, { ...r, who }, { data })
}

export function isTerminal(t: Pick<TaskRecord, 'state'>): boolean {
  return TERMINAL_STATES.has(t.state)
}

export function expired(t: TaskRecord, now: number, retentionMs: number): boolean {
  return isTerminal(t) && now - t.createdAt >= retentionMs
}

export function canSee(t: TaskRecord, v: Viewer, byId: boolean): boolean {
  if (v.all) return true
  if (t.caller.principal === null) return byId && v.principal === null
  return t.caller.principal === v.principal
}

export function tokenOf(t: TaskRecord): string {
  return Buffer.from(`${t.updatedAt}:${t.seq}`).toString('base64url')
}

export function parseToken(token: string): [number, number] {
  const m = /^(\d+):(\d+)$/.exec(Buffer.from(token, 'base64url').toString())
  if (m === null) throw invalidParams(`pageToken '${token}' is not a token this server gave`)
  return [Number(m[1]), Number(m[2])]
}

/** The refusal of one more push config on a task holding `onTask`, for an owner holding `ofOwner`. */
export function pushRefusal(taskId: string, onTask: number, ofOwner: number, l: PushLimits): PlatformError | undefined {
  if (onTask >= l.perTask)
    return invalidParams(
      `task ${taskId} has ${onTask} push notification configs, its limit (platform.a2a.push.max-configs-per-task)`
    )
  if (ofOwner >= l.perCaller)
    return invalidParams(
      `the caller keeps ${l.perCaller} push notification configs, its limit (platform.a2a.push.max-configs-per-principal); delete one first`
    )
  return undefined
}

/** The task moved to `state` as a store writes it (the terminal time set once). */
export function ended(t: TaskRecord, state: TaskState, message: Message | undefined, now: number): TaskRecord {
  return { ...t, state, statusMessage: message, updatedAt: now, endedAt: TERMINAL_STATES.has(state) ? now : undefined }
}

/** A message from the agent about a task (status messages, the answer in the history). */
export function agentMessage(t: Pick<TaskRecord, 'id' | 'contextId'>, text: string): Message {
  return { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }], contextId: t.contextId, taskId: t.id }
}

/** `configs` with `c` added (numbered after every other) or replacing the one of its id (keeping its number). */
export function withPush(configs: readonly PushConfig[], c: PushConfig): PushConfig[] {
  const at = configs.findIndex((p) => p.id === c.id)
  if (at >= 0) return configs.map((p, i) => (i === at ? { ...c, created: p.created } : p))
  const created = Math.max(Date.now(), ...configs.map((p) => (p.created ?? 0) + 1))
  return [...configs, { ...c, created }]
}
