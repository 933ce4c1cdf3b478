/**
 * A2A tasks in PostgreSQL (`platform_a2a_tasks`), shared by every node on the database: the task
 * as `json` (key order kept) beside the columns lists filter and sort on, and its push configs as
 * `jsonb` of their own, written only by the config methods (the running node's writes never carry
 * them, so a config added on another node is not overwritten). Creates take one transaction-scoped
 * advisory lock, so the bounds hold across nodes; a push config write locks its task's row and
 * its caller's lock. A running task is leased to its node (`lease_until`, on the database's clock):
 * every write of the node extends it, and so does its renewal of all its tasks in one statement.
 */
import type { PostgresDb, Sql } from '../store/index.js'
import { PlatformError } from '../contracts/index.js'
import { PostgresPool, anyLeaseExpired, expiredLeasesForUpdate, leaseUntil, renewLeases } from '../store/index.js'
import { A2A_ERRORS } from './errors.js'
import {
  CANCELABLE,
  INTERRUPTED,
  NODE_LOST,
  agentMessage,
  callerKey,
  ended,
  isTerminal,
  ownLimit,
  ownerKey,
  parseToken,
  pushRefusal,
  refusal,
  refusalOf,
  tokenOf,
  withPush,
  type A2aTaskRecords,
  type Canceled,
  type ListPage,
  type LostTask,
  type TaskLeases,
  type ListQuery,
  type NewTask,
  type PushConfig,
  type TaskRecord,
  type TaskRecordsOptions,
  type Written
} from './task-records.js'

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_a2a_tasks (
     id text COLLATE "C" PRIMARY KEY,
     seq bigserial NOT NULL,
     agent text COLLATE "C" NOT NULL,
     context_id text COLLATE "C" NOT NULL,
     principal text COLLATE "C",
     owner_key text COLLATE "C" NOT NULL,
     push_owner text COLLATE "C" NOT NULL,
     node text COLLATE "C" NOT NULL,
     state text NOT NULL,
     terminal boolean NOT NULL,
     created_at bigint NOT NULL,
     updated_at bigint NOT NULL,
     ended_at bigint,
     task json NOT NULL,
     push jsonb NOT NULL DEFAULT '[]'
   );
   CREATE INDEX platform_a2a_tasks_list ON platform_a2a_tasks (agent, updated_at DESC, seq DESC);
   CREATE INDEX platform_a2a_tasks_finished ON platform_a2a_tasks (owner_key, ended_at, seq) WHERE terminal;
   CREATE INDEX platform_a2a_tasks_running ON platform_a2a_tasks (node) WHERE NOT terminal;
   CREATE INDEX platform_a2a_tasks_push ON platform_a2a_tasks (push_owner) WHERE push <> '[]';`,
  // a task created before leases has none: its own node ends it at its next start, as before
  `ALTER TABLE platform_a2a_tasks ADD COLUMN lease_until timestamptz;
   CREATE INDEX platform_a2a_tasks_leases ON platform_a2a_tasks (lease_until) WHERE NOT terminal;`
]

/** A lease's new expiry, `$n` milliseconds from now on the database's clock (the nodes' clocks may differ). */
// one lock for every create on the database: the cap and the per-owner bounds are counted under it
const CREATE_LOCK = 0x6132_6174

interface Row {
  task: TaskRecord
  seq: string
  push: PushConfig[]
}

const COLUMNS = 'task, seq, push'

function recordOf(r: Row): TaskRecord {
  return { ...r.task, seq: Number(r.seq), push: r.push }
}

/** The task's json: everything but its seq (a column) and its push configs (a column of their own). */
function bodyOf(t: NewTask | TaskRecord): string {
  const { push: _push, seq: _seq, ...rest } = t as TaskRecord
  return JSON.stringify(rest)
}

export interface PostgresTaskRecordsOptions extends TaskRecordsOptions {
  /** The node's one pool (`platform.postgres()`). */
  db: () => Promise<PostgresDb>
}

export class PostgresTaskRecords implements A2aTaskRecords, TaskLeases {
  readonly kind = 'postgres'
  readonly leases: TaskLeases = this
  readonly leaseMs: number
  private readonly pg: PostgresPool
  private count = 0

  constructor(private readonly opts: PostgresTaskRecordsOptions) {
    this.leaseMs = opts.leaseMs ?? 5000
    this.pg = new PostgresPool({
      db: opts.db,
      schema: 'a2a-tasks',
      migrations: MIGRATIONS,
      unavailable: (store) => new PlatformError(A2A_ERRORS.A2A_STORE_UNAVAILABLE, { store })
    })
  }

  async start(): Promise<number> {
    await this.pg.start()
    // only this node's tasks: another live node's are its own to finish
    const { rows } = await this.pg.query<Row>(
      `SELECT ${COLUMNS} FROM platform_a2a_tasks WHERE node = $1 AND NOT terminal`,
      [this.opts.node]
    )
    const now = Date.now()
    for (const r of rows) {
      const t = recordOf(r)
      await this.update(ended(t, 'TASK_STATE_FAILED', agentMessage(t, INTERRUPTED), now))
    }
    await this.sweep(now)
    return rows.length
  }

  async stop(): Promise<void> {
    await this.pg.stop()
  }

  available(): boolean {
    return this.pg.available()
  }

  get size(): number {
    return this.count
  }

  async create(n: NewTask, now: number): Promise<TaskRecord> {
    return this.pg.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [CREATE_LOCK])
      await this.admit(c, n, now)
      if (n.push.length > 0) {
        const r = pushRefusal(n.id, 0, await pushCountIn(c, callerKey(n.caller)), this.opts.push)
        if (r !== undefined) throw r
      }
      const { rows } = await c.query<{ seq: string }>(
        `INSERT INTO platform_a2a_tasks
           (id, agent, context_id, principal, owner_key, push_owner, node, state, terminal, created_at, updated_at, task, push, lease_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false, $9, $9, $10, $11, ${leaseUntil(12)}) RETURNING seq`,
        [
          n.id,
          n.agent,
          n.contextId,
          n.caller.principal,
          ownerKey(n.caller),
          callerKey(n.caller),
          n.node,
          n.state,
          n.createdAt,
          bodyOf(n),
          JSON.stringify(n.push),
          this.leaseMs
        ]
      )
      this.count++
      return { ...structuredClone(n), seq: Number(rows[0]!.seq) }
    })
  }

  /** Makes room for one more task of `n.caller` (under the create lock), or throws the refusal of the full limit. */
  private async admit(c: Sql, n: NewTask, now: number): Promise<void> {
    const l = this.opts.limits
    const key = ownerKey(n.caller)
    const counts = async (): Promise<{ own: number; anon: number; total: number }> => {
      const { rows } = await c.query<{ own: string; anon: string; total: string }>(
        `SELECT count(*) FILTER (WHERE owner_key = $1) AS own, count(*) FILTER (WHERE principal IS NULL) AS anon,
                count(*) AS total FROM platform_a2a_tasks`,
        [key]
      )
      const r = rows[0]!
      this.count = Number(r.total)
      return { own: Number(r.own), anon: Number(r.anon), total: Number(r.total) }
    }
    let k = await counts()
    const own = ownLimit(n.caller, k.own, l)
    if (own !== undefined && !(await recycle(c, 'owner_key = $1', [key]))) throw refusal(own)
    if (n.caller.principal === null && k.anon >= l.max - l.reserve && !(await recycle(c, 'principal IS NULL', [])))
      throw refusal(refusalOf('anonymous', l))
    k = await counts()
    if (k.total < l.max) return
    await this.sweepIn(c, now)
    if ((await counts()).total < l.max || (await recycle(c, 'principal IS NULL', []))) return
    // at the cap a caller may still give up its own finished task: no one else's result is lost
    if (!(await recycle(c, 'owner_key = $1', [key]))) throw refusal(refusalOf('server', l))
  }

  async get(id: string, now: number): Promise<TaskRecord | undefined> {
    const { rows } = await this.pg.query<Row>(
      `SELECT ${COLUMNS} FROM platform_a2a_tasks WHERE id = $1 AND NOT (terminal AND created_at <= $2)`,
      [id, now - this.opts.retentionMs]
    )
    return rows[0] === undefined ? undefined : recordOf(rows[0])
  }

  async update(t: TaskRecord): Promise<Written | undefined> {
    const { rows } = await this.pg.query<Row>(
      `UPDATE platform_a2a_tasks SET state = $2, terminal = $3, updated_at = $4, ended_at = $5, task = $6,
              lease_until = ${leaseUntil(7)}
        WHERE id = $1 AND NOT terminal RETURNING ${COLUMNS}`,
      [t.id, t.state, isTerminal(t), t.updatedAt, t.endedAt ?? null, bodyOf(t), this.leaseMs]
    )
    if (rows[0] !== undefined) return { task: recordOf(rows[0]), written: true }
    const kept = await this.pg.query<Row>(`SELECT ${COLUMNS} FROM platform_a2a_tasks WHERE id = $1`, [t.id])
    return kept.rows[0] === undefined ? undefined : { task: recordOf(kept.rows[0]), written: false }
  }

  async cancel(id: string, text: string, now: number): Promise<Canceled | undefined> {
    return this.pg.transaction(async (c) => {
      const { rows } = await c.query<Row>(
        `SELECT ${COLUMNS} FROM platform_a2a_tasks WHERE id = $1 AND NOT (terminal AND created_at <= $2) FOR UPDATE`,
        [id, now - this.opts.retentionMs]
      )
      if (rows[0] === undefined) return undefined
      const t = recordOf(rows[0])
      if (!CANCELABLE.has(t.state)) return { task: t, canceled: false, from: t.state }
      const next = ended(t, 'TASK_STATE_CANCELED', agentMessage(t, text), now)
      await c.query(
        `UPDATE platform_a2a_tasks SET state = $2, terminal = true, updated_at = $3, ended_at = $3, task = $4 WHERE id = $1`,
        [id, next.state, now, bodyOf(next)]
      )
      return { task: next, canceled: true, from: t.state }
    })
  }

  async list(q: ListQuery, now: number): Promise<ListPage> {
    const params: unknown[] = [q.agent, now - this.opts.retentionMs]
    let where = 'agent = $1 AND NOT (terminal AND created_at <= $2)'
    const add = (sql: string, ...values: unknown[]): void => {
      params.push(...values)
      where += ` AND ${sql.replace(/\$(\d)/g, (_, i: string) => `$${params.length - values.length + Number(i)}`)}`
    }
    if (!q.viewer.all) {
      // an anonymous caller lists none: it reads an anonymous task by the id it was told
      if (q.viewer.principal === null) return { tasks: [], nextPageToken: '', pageSize: q.pageSize, totalSize: 0 }
      add('principal = $1', q.viewer.principal)
    }
    if (q.contextId !== undefined) add('context_id = $1', q.contextId)
    if (q.status !== undefined) add('state = $1', q.status)
    if (q.after !== undefined) add('updated_at >= $1', q.after)
    const total = await this.pg.query<{ n: string }>(
      `SELECT count(*) AS n FROM platform_a2a_tasks WHERE ${where}`,
      params
    )
    if (q.pageToken !== undefined && q.pageToken !== '') add('(updated_at, seq) < ($1, $2)', ...parseToken(q.pageToken))
    params.push(q.pageSize + 1)
    const { rows } = await this.pg.query<Row>(
      `SELECT ${COLUMNS} FROM platform_a2a_tasks WHERE ${where} ORDER BY updated_at DESC, seq DESC LIMIT $${params.length}`,
      params
    )
    const tasks = rows.slice(0, q.pageSize).map(recordOf)
    const more = rows.length > q.pageSize
    return {
      tasks,
      nextPageToken: more ? tokenOf(tasks.at(-1)!) : '',
      pageSize: q.pageSize,
      totalSize: Number(total.rows[0]!.n)
    }
  }

  async all(contextId: string | undefined, now: number): Promise<TaskRecord[]> {
    const params: unknown[] = [now - this.opts.retentionMs]
    const ctx = contextId === undefined ? '' : ' AND context_id = $2'
    if (contextId !== undefined) params.push(contextId)
    const { rows } = await this.pg.query<Row>(
      `SELECT ${COLUMNS} FROM platform_a2a_tasks WHERE NOT (terminal AND created_at <= $1)${ctx} ORDER BY seq DESC`,
      params
    )
    return rows.map(recordOf)
  }

  async setPush(config: PushConfig): Promise<PushConfig | undefined> {
    return this.pg.transaction(async (c) => {
      const { rows } = await c.query<{ push: PushConfig[]; push_owner: string }>(
        'SELECT push, push_owner FROM platform_a2a_tasks WHERE id = $1 FOR UPDATE',
        [config.taskId]
      )
      const r = rows[0]
      if (r === undefined) return undefined
      const at = r.push.findIndex((p) => p.id === config.id)
      if (at < 0) {
        // the caller's configs over all its tasks are counted under its own lock
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`a2a push ${r.push_owner}`])
        const refused = pushRefusal(config.taskId, r.push.length, await pushCountIn(c, r.push_owner), this.opts.push)
        if (refused !== undefined) throw refused
      }
      const push = withPush(r.push, config)
      await c.query('UPDATE platform_a2a_tasks SET push = $2 WHERE id = $1', [config.taskId, JSON.stringify(push)])
      return { ...push.find((p) => p.id === config.id)! }
    })
  }

  async deletePush(taskId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pg.query(
      `UPDATE platform_a2a_tasks SET push = (SELECT coalesce(jsonb_agg(p), '[]') FROM jsonb_array_elements(push) p WHERE p->>'id' <> $2)
        WHERE id = $1 AND push @> jsonb_build_array(jsonb_build_object('id', $2::text))`,
      [taskId, id]
    )
    return (rowCount ?? 0) > 0
  }

  async pushCount(owner: string): Promise<number> {
    const { rows } = await this.pg.query<{ n: string }>(
      `SELECT coalesce(sum(jsonb_array_length(push)), 0) AS n FROM platform_a2a_tasks WHERE push_owner = $1 AND push <> '[]'`,
      [owner]
    )
    return Number(rows[0]!.n)
  }

  async sweep(now: number): Promise<void> {
    await this.pg.transaction((c) => this.sweepIn(c, now))
  }

  renew(ids: readonly string[]): Promise<string[]> {
    return renewLeases(this.pg, 'platform_a2a_tasks', ids, this.opts.node, this.leaseMs)
  }

  async endLost(now: number): Promise<LostTask[]> {
    if (!(await anyLeaseExpired(this.pg, 'platform_a2a_tasks'))) return []
    return this.pg.transaction(async (c) => {
      const { rows } = await c.query<Row>(expiredLeasesForUpdate(COLUMNS, 'platform_a2a_tasks'), [])
      const lost: LostTask[] = []
      for (const r of rows) {
        const t = recordOf(r)
        const next = ended(t, 'TASK_STATE_FAILED', agentMessage(t, NODE_LOST), now)
        await c.query(
          `UPDATE platform_a2a_tasks SET state = $2, terminal = true, updated_at = $3, ended_at = $3, task = $4 WHERE id = $1`,
          [t.id, next.state, now, bodyOf(next)]
        )
        lost.push({ task: next, from: t.state })
      }
      return lost
    })
  }

  private async sweepIn(c: Sql, now: number): Promise<void> {
    await c.query('DELETE FROM platform_a2a_tasks WHERE terminal AND created_at <= $1', [now - this.opts.retentionMs])
    const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM platform_a2a_tasks')
    this.count = Number(rows[0]!.n)
  }
}

/** Forgets the oldest finished task matching `where` (`$1`… are `params`); false when there is none. */
async function recycle(c: Sql, where: string, params: unknown[]): Promise<boolean> {
  const { rowCount } = await c.query(
    `DELETE FROM platform_a2a_tasks WHERE id = (
       SELECT id FROM platform_a2a_tasks WHERE terminal AND ${where} ORDER BY ended_at, seq LIMIT 1)`,
    params
  )
  return (rowCount ?? 0) > 0
}

async function pushCountIn(c: Sql, owner: string): Promise<number> {
  const { rows } = await c.query<{ n: string }>(
    `SELECT coalesce(sum(jsonb_array_length(push)), 0) AS n FROM platform_a2a_tasks WHERE push_owner = $1 AND push <> '[]'`,
    [owner]
  )
  return Number(rows[0]!.n)
}
