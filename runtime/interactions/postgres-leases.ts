import type { PoolClient, QueryResult, QueryResultRow } from 'pg'
import { LIVE } from './postgres-statements.js'
import { INTERRUPTED_MESSAGE, NODE_LOST_MESSAGE, checkId, headerOf, interrupted } from './store-input.js'
import type { InteractionHeader, LeaseRenewal, RunLeases } from './types.js'

// One statement renews every lease a node holds: a run whose epoch moved on (another node ended
// it) or whose row is gone is not returned, and its owner learns it lost the run.
const RENEW = `UPDATE platform_interactions p SET lease_until = clock_timestamp() + $3::bigint * interval '1 millisecond'
    FROM unnest($1::text[], $2::bigint[]) AS l(id, epoch)
   WHERE p.id = l.id AND p.lease_epoch = l.epoch AND p.status IN ${LIVE}
  RETURNING p.id, p.cancel_requested`

// the whole sweep when no lease has expired: one query on the partial index of live runs' leases
const ANY_EXPIRED = `SELECT 1 FROM platform_interactions WHERE status IN ${LIVE} AND lease_until < clock_timestamp() LIMIT 1`

// SKIP LOCKED: two nodes sweeping at once each take other runs, neither waits for the other
const LOCK_EXPIRED = `SELECT header, ended_seq FROM platform_interactions
   WHERE status IN ${LIVE} AND lease_until < clock_timestamp()
   ORDER BY lease_until LIMIT 100 FOR UPDATE SKIP LOCKED`

const LOCK_OWN = `SELECT header, ended_seq FROM platform_interactions
   WHERE status IN ${LIVE} AND (owner_node = $1 OR owner_node IS NULL) FOR UPDATE`

const REQUEST_CANCEL = `UPDATE platform_interactions SET cancel_requested = true
   WHERE id = $1 AND user_id = $2 AND status IN ${LIVE} AND ended_seq IS NULL
  RETURNING owner_node`

const ENDED = `SELECT header FROM platform_interactions WHERE id = ANY($1::text[]) AND status NOT IN ${LIVE}`

interface EndRow {
  header: InteractionHeader
  ended_seq: string | null
}

/**
 * Ends the locked live runs `rows` FAILED with `message` and a terminal error step, and moves each
 * one's lease epoch on (its owner, if still running, is fenced out). Runs inside the caller's
 * transaction; resolves the final headers.
 */
async function endRuns(c: PoolClient, rows: EndRow[], message: string): Promise<InteractionHeader[]> {
  const ended: InteractionHeader[] = []
  const now = new Date().toISOString()
  for (const row of rows) {
    const id = row.header.id
    const last = await c.query<{ last: string | null }>(
      'SELECT max(seq) AS last FROM platform_interaction_steps WHERE interaction_id = $1',
      [id]
    )
    const seq = last.rows[0]?.last == null ? 0 : Number(last.rows[0].last) + 1
    const { header, step } = interrupted(row.header, seq, now, message)
    // an owner that died between its terminal step and header keeps that one terminal step
    const hasEnd = row.ended_seq !== null
    await c.query(
      `UPDATE platform_interactions SET status = $2, header = $3, ended_seq = COALESCE(ended_seq, $4),
         lease_epoch = lease_epoch + 1 WHERE id = $1`,
      [id, header.status, JSON.stringify(header), seq]
    )
    if (!hasEnd)
      await c.query('INSERT INTO platform_interaction_steps (interaction_id, seq, step) VALUES ($1, $2, $3)', [
        id,
        seq,
        JSON.stringify(step)
      ])
    ended.push(header)
  }
  return ended
}

async function inTransaction<T>(c: PoolClient, fn: () => Promise<T>): Promise<T> {
  await c.query('BEGIN')
  try {
    const r = await fn()
    await c.query('COMMIT')
    return r
  } catch (e) {
    await c.query('ROLLBACK')
    throw e
  }
}

/**
 * Every run of `node` (or of no recorded node) still RUNNING or CREATED becomes FAILED with a
 * terminal error step, in one transaction. The rows are locked first, so a step written meanwhile
 * by another process is either counted in the last seq read after or refused.
 */
export async function markInterrupted(c: PoolClient, node: string): Promise<number> {
  return inTransaction(c, async () => {
    const { rows } = await c.query<EndRow>(LOCK_OWN, [node])
    return (await endRuns(c, rows, INTERRUPTED_MESSAGE)).length
  })
}

export interface PostgresLeaseAccess {
  query<R extends QueryResultRow>(text: string, params: unknown[]): Promise<QueryResult<R>>
  /** A client of the pool for a transaction, released by `fn`'s end. */
  transaction<T>(fn: (c: PoolClient) => Promise<T>): Promise<T>
  leaseMs: number
  /** The epochs of the leases this store holds, by run id (the store's writes carry them). */
  held: Map<string, number>
}

/** Leases of the Postgres store: rows of `platform_interactions`, the database's clock. */
export class PostgresRunLeases implements RunLeases {
  constructor(private readonly db: PostgresLeaseAccess) {}

  async renew(ids: readonly string[]): Promise<LeaseRenewal> {
    const mine = ids.filter((id) => this.db.held.has(id))
    if (mine.length === 0) return { lost: [], cancelled: [] }
    const { rows } = await this.db.query<{ id: string; cancel_requested: boolean }>(RENEW, [
      mine,
      mine.map((id) => this.db.held.get(id)!),
      this.db.leaseMs
    ])
    const kept = new Set(rows.map((r) => r.id))
    // a lost run's stale epoch stays held: any later write of this node for it is refused
    const lost = mine.filter((id) => !kept.has(id))
    return { lost, cancelled: rows.filter((r) => r.cancel_requested).map((r) => r.id) }
  }

  async sweep(): Promise<InteractionHeader[]> {
    if ((await this.db.query(ANY_EXPIRED, [])).rows.length === 0) return []
    return this.db.transaction((c) =>
      inTransaction(c, async () => endRuns(c, (await c.query<EndRow>(LOCK_EXPIRED)).rows, NODE_LOST_MESSAGE))
    )
  }

  async requestCancel(id: string, userId: string): Promise<string | undefined> {
    checkId(id)
    const { rows } = await this.db.query<{ owner_node: string | null }>(REQUEST_CANCEL, [id, userId])
    return rows.length === 0 ? undefined : (rows[0]!.owner_node ?? '')
  }

  async ended(ids: readonly string[]): Promise<InteractionHeader[]> {
    if (ids.length === 0) return []
    const { rows } = await this.db.query<{ header: InteractionHeader }>(ENDED, [ids])
    return rows.map((r) => headerOf(r.header))
  }
}
