/**
 * MCP tasks in PostgreSQL, shared by the nodes: a task handed out on one node is read, listed,
 * awaited and cancelled on any other. The node running a task writes each of its changes; a write
 * after the task ended (cancelled from another node) is refused, which tells the running node to
 * stop. The record is kept as `json` beside the columns the reads filter on.
 */
import { PlatformError } from '../contracts/index.js'
import { PostgresPool, type PostgresDb } from '../store/index.js'
import { ErrorCode, MCP_ERRORS } from './errors.js'
import { INTERRUPTED, type TaskRecord } from './task-record.js'

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
   CREATE INDEX platform_mcp_tasks_expiry ON platform_mcp_tasks (expires_at) WHERE terminal;`
]

const TERMINAL = new Set(['completed', 'failed', 'cancelled'])

/** A task as kept: its record and the node running it. */
export interface KeptTask {
  rec: TaskRecord
  node: string
}

export interface PostgresTasksOptions {
  /** The node's one pool (`platform.postgres()`). */
  db: () => Promise<PostgresDb>
  node: string
}

const expiry = (r: TaskRecord): number => Date.parse(r.lastUpdatedAt) + r.ttlMs

export class PostgresTasks {
  private readonly pg: PostgresPool

  constructor(private readonly opts: PostgresTasksOptions) {
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
    for (const { record } of rows) {
      const { inputRequests: _gone, ...rest } = record
      await this.put({
        ...rest,
        status: 'failed',
        statusMessage: INTERRUPTED,
        error: { code: ErrorCode.InternalError, message: INTERRUPTED },
        lastUpdatedAt: now
      })
    }
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
      `INSERT INTO platform_mcp_tasks (id, principal, node, terminal, expires_at, created_at, record)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET terminal = EXCLUDED.terminal, expires_at = EXCLUDED.expires_at, record = EXCLUDED.record
         WHERE NOT platform_mcp_tasks.terminal`,
      [rec.id, rec.principal, this.opts.node, TERMINAL.has(rec.status), expiry(rec), rec.createdAt, JSON.stringify(rec)]
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

  /** Forgets ended tasks past their TTL, whichever node ran them. */
  async sweep(now: number): Promise<void> {
    await this.pg.query('DELETE FROM platform_mcp_tasks WHERE terminal AND expires_at < $1', [now])
  }
}
