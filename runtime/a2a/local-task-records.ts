/**
 * A2A tasks of one node: held in process memory with O(1) bookkeeping per create (counts per
 * owner, each owner's finished tasks in the order they finished), and, with a database, written
 * through to LMDB (`a2a-tasks`) so a task and its result survive a restart. Every record handed
 * out is a copy: what a caller changes reaches the store only through `update`.
 */
import type { Database } from 'lmdb'
import { OwnerQuota } from '../http/index.js'
import {
  CANCELABLE,
  INTERRUPTED,
  agentMessage,
  QUOTA_KEYS,
  callerKey,
  canSee,
  ended,
  expired,
  isTerminal,
  ownerKey,
  parseToken,
  pushRefusal,
  refusal,
  tokenOf,
  withPush,
  type A2aTaskRecords,
  type Canceled,
  type ListPage,
  type ListQuery,
  type NewTask,
  type PushConfig,
  type TaskRecord,
  type TaskRecordsOptions,
  type Written
} from './task-records.js'

const copy = (t: TaskRecord): TaskRecord => structuredClone(t)

export class LocalTaskRecords implements A2aTaskRecords {
  readonly kind: 'memory' | 'lmdb'
  /** One node's own tasks: no other node ends them, its next start does. */
  readonly leases = undefined
  private readonly tasks = new Map<string, TaskRecord>()
  private readonly quota: OwnerQuota
  /** Each owner's finished tasks, oldest finished first: what makes room for its next one. */
  private readonly finished = new Map<string, Set<string>>()
  /** Finished anonymous tasks, oldest finished first: what makes room at the anonymous pool and the cap. */
  private readonly finishedAnonymous = new Set<string>()
  private readonly pushByCaller = new Map<string, number>()
  private seq = 0

  constructor(
    private readonly opts: TaskRecordsOptions,
    private readonly db?: Database<TaskRecord, string>
  ) {
    this.kind = db === undefined ? 'memory' : 'lmdb'
    this.quota = new OwnerQuota(opts.limits, QUOTA_KEYS)
  }

  async start(): Promise<number> {
    if (this.db === undefined) return 0
    const kept: TaskRecord[] = []
    for (const { value } of this.db.getRange()) kept.push(value)
    kept.sort((a, b) => (a.endedAt ?? Infinity) - (b.endedAt ?? Infinity) || a.seq - b.seq)
    const now = Date.now()
    const writes: Promise<unknown>[] = []
    let marked = 0
    for (let t of kept) {
      if (expired(t, now, this.opts.retentionMs)) {
        writes.push(this.db.remove(t.id))
        continue
      }
      // one node's own database: every task still running was this node's, and its turn is gone
      if (!isTerminal(t)) {
        t = ended(t, 'TASK_STATE_FAILED', agentMessage(t, INTERRUPTED), now)
        writes.push(this.db.put(t.id, t))
        marked++
      }
      this.seq = Math.max(this.seq, t.seq)
      this.track(t)
    }
    await Promise.all(writes)
    return marked
  }

  async stop(): Promise<void> {
    /* the platform's LMDB environment is closed by the platform */
  }

  available(): boolean {
    return true
  }

  get size(): number {
    return this.tasks.size
  }

  private track(t: TaskRecord): void {
    this.tasks.set(t.id, t)
    this.quota.add(t.caller)
    if (isTerminal(t)) this.finish(t)
    if (t.push.length > 0) this.countPush(callerKey(t.caller), t.push.length)
  }

  async create(n: NewTask, now: number): Promise<TaskRecord> {
    if (n.push.length > 0) {
      const r = pushRefusal(n.id, 0, this.pushOf(callerKey(n.caller)), this.opts.push)
      if (r !== undefined) throw r
    }
    this.admit(n.caller, now)
    const t: TaskRecord = { ...structuredClone(n), seq: ++this.seq }
    await this.db?.put(t.id, t)
    this.track(t)
    return copy(t)
  }

  /** Makes room for one more task of `caller`, or throws the refusal of the limit that has none. */
  private admit(caller: NewTask['caller'], now: number): void {
    const own = this.quota.check(caller)
    if (own !== undefined && !this.recycle(this.finished.get(ownerKey(caller)))) throw refusal(own)
    if (caller.principal === null && this.quota.anonymousFull && !this.recycle(this.finishedAnonymous))
      throw refusal(this.quota.refusal('anonymous'))
    if (this.tasks.size < this.opts.limits.max) return
    this.sweepNow(now)
    if (this.tasks.size < this.opts.limits.max || this.recycle(this.finishedAnonymous)) return
    // at the cap a caller may still give up its own finished task: no one else's result is lost
    if (!this.recycle(this.finished.get(ownerKey(caller)))) throw refusal(this.quota.refusal('server'))
  }

  /** Forgets the oldest of `finished`; false when there is none. */
  private recycle(finished: Set<string> | undefined): boolean {
    const oldest = finished?.values().next().value
    if (oldest === undefined) return false
    this.forget(oldest)
    return true
  }

  private forget(id: string): void {
    const t = this.tasks.get(id)
    if (t === undefined) return
    this.tasks.delete(id)
    this.quota.remove(t.caller)
    const key = ownerKey(t.caller)
    const own = this.finished.get(key)
    if (own?.delete(id) === true && own.size === 0) this.finished.delete(key)
    this.finishedAnonymous.delete(id)
    if (t.push.length > 0) this.countPush(callerKey(t.caller), -t.push.length)
    void this.db?.remove(id)
  }

  private finish(t: TaskRecord): void {
    const key = ownerKey(t.caller)
    const own = this.finished.get(key)
    if (own === undefined) this.finished.set(key, new Set([t.id]))
    else own.add(t.id)
    if (t.caller.principal === null) this.finishedAnonymous.add(t.id)
  }

  async get(id: string, now: number): Promise<TaskRecord | undefined> {
    const t = this.held(id, now)
    return t === undefined ? undefined : copy(t)
  }

  private held(id: string, now: number): TaskRecord | undefined {
    const t = this.tasks.get(id)
    if (t !== undefined && expired(t, now, this.opts.retentionMs)) {
      this.forget(id)
      return undefined
    }
    return t
  }

  async update(next: TaskRecord): Promise<Written | undefined> {
    const t = this.tasks.get(next.id)
    if (t === undefined) return undefined
    if (isTerminal(t)) return { task: copy(t), written: false }
    const kept: TaskRecord = { ...structuredClone(next), push: t.push, seq: t.seq }
    await this.db?.put(kept.id, kept)
    this.tasks.set(kept.id, kept)
    if (isTerminal(kept)) this.finish(kept)
    return { task: copy(kept), written: true }
  }

  async cancel(id: string, text: string, now: number): Promise<Canceled | undefined> {
    const t = this.held(id, now)
    if (t === undefined) return undefined
    if (!CANCELABLE.has(t.state)) return { task: copy(t), canceled: false, from: t.state }
    const out = await this.update(ended(t, 'TASK_STATE_CANCELED', agentMessage(t, text), now))
    return { task: out!.task, canceled: true, from: t.state }
  }

  async list(q: ListQuery, now: number): Promise<ListPage> {
    this.sweepNow(now)
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
      tasks: tasks.map(copy),
      nextPageToken: more ? tokenOf(last) : '',
      pageSize: q.pageSize,
      totalSize: matching.length
    }
  }

  async all(contextId: string | undefined, now: number): Promise<TaskRecord[]> {
    this.sweepNow(now)
    const out: TaskRecord[] = []
    for (const t of this.tasks.values()) if (contextId === undefined || t.contextId === contextId) out.push(copy(t))
    return out.sort((a, b) => b.seq - a.seq)
  }

  async setPush(c: PushConfig): Promise<PushConfig | undefined> {
    const t = this.tasks.get(c.taskId)
    if (t === undefined) return undefined
    const at = t.push.findIndex((p) => p.id === c.id)
    if (at < 0) {
      const owner = callerKey(t.caller)
      const r = pushRefusal(t.id, t.push.length, this.pushOf(owner), this.opts.push)
      if (r !== undefined) throw r
    }
    const push = withPush(t.push, c)
    const kept = { ...t, push }
    await this.db?.put(t.id, kept)
    this.tasks.set(t.id, kept)
    if (at < 0) this.countPush(callerKey(t.caller), 1)
    return { ...push.find((p) => p.id === c.id)! }
  }

  async deletePush(taskId: string, id: string): Promise<boolean> {
    const t = this.tasks.get(taskId)
    if (t === undefined || !t.push.some((p) => p.id === id)) return false
    const kept = { ...t, push: t.push.filter((p) => p.id !== id) }
    await this.db?.put(t.id, kept)
    this.tasks.set(t.id, kept)
    this.countPush(callerKey(t.caller), -1)
    return true
  }

  async pushCount(owner: string): Promise<number> {
    return this.pushOf(owner)
  }

  private pushOf(owner: string): number {
    return this.pushByCaller.get(owner) ?? 0
  }

  private countPush(owner: string, by: number): void {
    const n = this.pushOf(owner) + by
    if (n <= 0) this.pushByCaller.delete(owner)
    else this.pushByCaller.set(owner, n)
  }

  async sweep(now: number): Promise<void> {
    this.sweepNow(now)
  }

  private sweepNow(now: number): void {
    for (const t of this.tasks.values()) if (expired(t, now, this.opts.retentionMs)) this.forget(t.id)
  }
}
