/**
 * MCP tasks in PostgreSQL, shared by the nodes: a task handed out on one node is read, listed,
 * awaited and cancelled on any other. The node running a task writes each of its changes; a write
 * after the task ended (cancelled from another node) is refused, which tells the running node to
 * stop. The record is kept as `json` beside the columns the reads filter on. A running task is
 * leased to its node (`lease_until`, on the database's clock): every write of the node extends it,
 * and so does its renewal of all its tasks in one statement; a task whose lease expired (its node
 * killed or cut off) is ended failed `interrupted: node lost` by whichever node finds it first.
 */
import { PlatformError } from '../contracts/index.js'
import {
  PostgresPool,
  anyLeaseExpired,
  expiredLeasesForUpdate,
  leaseUntil,
  renewLeases,
  type LeasedTasks,
  type PostgresDb
} from '../store/index.js'
import { ErrorCode, MCP_ERRORS } from './errors.js'
import { INTERRUPTED, NODE_LOST, type TaskRecord, type TaskStatus } from './task-record.js'

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_mcp_tasks (
     id text COLLATE "C" PRIMARY KEY,
     principal text COLLATE "C",
     node text COLLATE "C" NOT NULL,
     terminal boolean NOT NULL,
     expires_at bigint NOT NULL,
     created_at text COLLATE "C" NOT NULL,
     record json NOT NULL
   );
   CREATE INDEX platform_mcp_tasks_running ON platform_mcp_tasks (node) WHERE NOT terminal;
   CREATE INDEX platform_mcp_tasks_expiry ON platform_mcp_tasks (expires_at) WHERE terminal;`,
  // a task created before leases has none: its own node ends it at its next start, as before
  `ALTER TABLE platform_mcp_tasks ADD COLUMN lease_until timestamptz;
   CREATE INDEX platform_mcp_tasks_leases ON platform_mcp_tasks (lease_until) WHERE NOT terminal;`
]

/** A lease's new expiry, `$n` milliseconds from now on the database's clock (the nodes' clocks may differ). */
const TERMINAL = new Set(['completed', 'failed', 'cancelled'])

/** A task as kept: its record and the node running it. */
export interface KeptTask {
  rec: TaskRecord
  node: string
}

/** A task of a lost node, ended by the node that found its lease expired. */
export interface LostTask {
  rec: TaskRecord
  /** The status it had when its node was lost. */
  from: TaskStatus
}

export interface PostgresTasksOptions {
  /** The node's one pool (`platform.postgres()`). */
  db: () => Promise<PostgresDb>
  node: string
  /** How long the node owns a running task it stops renewing (default 5000). */
  leaseMs?: number
}

const expiry = (r: TaskRecord): number => Date.parse(r.lastUpdatedAt) + r.ttlMs

/** A task ended where its run cannot go on: no pending input, the reason as its message and error. */
function ended(r: TaskRecord, message: string, now: string): TaskRecord {
  const { inputRequests: _gone, ...rest } = r
  return {
    ...rest,
    status: 'failed',
    statusMessage: message,
    error: { code: ErrorCode.InternalError, message },
    lastUpdatedAt: now
  }
}

export class PostgresTasks implements LeasedTasks<LostTask> {
  readonly leaseMs: number
  private readonly pg: PostgresPool

  constructor(private readonly opts: PostgresTasksOptions) {
    this.leaseMs = opts.leaseMs ?? 5000
    this.pg = new PostgresPool({
      db: opts.db,
      schema: 'mcp-tasks',
      migrations: MIGRATIONS,
      unavailable: (store) => new PlatformError(MCP_ERRORS.MCP_STORE_UNAVAILABLE, { store })
    })
  }

  /** Opens the store and fails this node's tasks still running when it stopped (their runs are gone). */
  async start(): Promise<number> {
    await this.pg.start()
    const { rows } = await this.pg.query<{ record: TaskRecord }>(
      'SELECT record FROM platform_mcp_tasks WHERE node = $1 AND NOT terminal',
      [this.opts.node]
    )
    const now = new Date().toISOString()
    for (const { record } of rows) await this.put(ended(record, INTERRUPTED, now))
    return rows.length
  }

  stop(): Promise<void> {
    return this.pg.stop()
  }

  available(): boolean {
    return this.pg.available()
  }

  /** The running node's write; false when refused because the kept task has ended. */
  async put(rec: TaskRecord): Promise<boolean> {
    const { rowCount } = await this.pg.query(
      `INSERT INTO platform_mcp_tasks (id, principal, node, terminal, expires_at, created_at, record, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, ${leaseUntil(8)})
       ON CONFLICT (id) DO UPDATE SET terminal = EXCLUDED.terminal, expires_at = EXCLUDED.expires_at,
         record = EXCLUDED.record, lease_until = EXCLUDED.lease_until
         WHERE NOT platform_mcp_tasks.terminal`,
      [
        rec.id,
        rec.principal,
        this.opts.node,
        TERMINAL.has(rec.status),
        expiry(rec),
        rec.createdAt,
        JSON.stringify(rec),
        this.leaseMs
      ]
    )
    return (rowCount ?? 0) > 0
  }

  async load(id: string): Promise<KeptTask | undefined> {
    const { rows } = await this.pg.query<{ record: TaskRecord; node: string }>(
      'SELECT record, node FROM platform_mcp_tasks WHERE id = $1',
      [id]
    )
    const r = rows[0]
    return r === undefined ? undefined : { rec: r.record, node: r.node }
  }

  /** Cancels a task that has not ended, whichever node runs it; undefined when unknown. */
  async cancel(id: string, message: string): Promise<(KeptTask & { canceled: boolean }) | undefined> {
    return this.pg.transaction(async (c) => {
      const { rows } = await c.query<{ record: TaskRecord; node: string }>(
        'SELECT record, node FROM platform_mcp_tasks WHERE id = $1 FOR UPDATE',
        [id]
      )
      const r = rows[0]
      if (r === undefined) return undefined
      if (TERMINAL.has(r.record.status)) return { rec: r.record, node: r.node, canceled: false }
      const { inputRequests: _gone, ...rest } = r.record
      const rec: TaskRecord = {
        ...rest,
        status: 'cancelled',
        statusMessage: message,
        lastUpdatedAt: new Date().toISOString()
      }
      await c.query('UPDATE platform_mcp_tasks SET terminal = true, expires_at = $2, record = $3 WHERE id = $1', [
        id,
        expiry(rec),
        JSON.stringify(rec)
      ])
      return { rec, node: r.node, canceled: true }
    })
  }

  /** The tasks a principal sees (its own and the ones without a principal), oldest first. */
  async list(principal: string | null): Promise<TaskRecord[]> {
    const { rows } = await this.pg.query<{ record: TaskRecord }>(
      'SELECT record FROM platform_mcp_tasks WHERE principal IS NULL OR principal = $1 ORDER BY created_at, id',
      [principal]
    )
    return rows.map((r) => r.record)
  }

  renew(ids: readonly string[]): Promise<string[]> {
    return renewLeases(this.pg, 'platform_mcp_tasks', ids, this.opts.node, this.leaseMs)
  }

  async endLost(now: number): Promise<LostTask[]> {
    if (!(await anyLeaseExpired(this.pg, 'platform_mcp_tasks'))) return []
    return this.pg.transaction(async (c) => {
      const { rows } = await c.query<{ record: TaskRecord }>(expiredLeasesForUpdate('record', 'platform_mcp_tasks'), [])
      const lost: LostTask[] = []
      for (const { record } of rows) {
        const rec = ended(record, NODE_LOST, new Date(now).toISOString())
        await c.query('UPDATE platform_mcp_tasks SET terminal = true, expires_at = $2, record = $3 WHERE id = $1', [
          rec.id,
          expiry(rec),
          JSON.stringify(rec)
        ])
        lost.push({ rec, from: record.status })
      }
      return lost
    })
  }

  /** Forgets ended tasks past their TTL, whichever node ran them. */
  async sweep(now: number): Promise<void> {
    await this.pg.query('DELETE FROM platform_mcp_tasks WHERE terminal AND expires_at < $1', [now])
  }
}
