/**
 * The SQL of task leases a PostgreSQL task table shares with the others (A2A tasks, MCP tasks):
 * each row has `node`, `terminal` and `lease_until`, kept on the database's clock so every node
 * reads the same time.
 */
import type { Sql } from './postgres-db.js'

/** `lease_until` the `$n` parameter's milliseconds from now. */
export const leaseUntil = (n: number): string => `clock_timestamp() + $${n}::bigint * interval '1 millisecond'`

/** Renews the leases `node` holds of `ids` in one statement; returns the ids it no longer holds. */
export async function renewLeases(
  sql: Sql,
  table: string,
  ids: readonly string[],
  node: string,
  leaseMs: number
): Promise<string[]> {
  if (ids.length === 0) return []
  const { rows } = await sql.query<{ id: string }>(
    `UPDATE ${table} SET lease_until = ${leaseUntil(3)}
      WHERE id = ANY($1::text[]) AND node = $2 AND NOT terminal RETURNING id`,
    [ids, node, leaseMs]
  )
  const kept = new Set(rows.map((r) => r.id))
  return ids.filter((id) => !kept.has(id))
}

/** Whether a running task's lease expired: one query on the partial index, the whole sweep when none has. */
export async function anyLeaseExpired(sql: Sql, table: string): Promise<boolean> {
  const { rows } = await sql.query(
    `SELECT 1 FROM ${table} WHERE NOT terminal AND lease_until < clock_timestamp() LIMIT 1`,
    []
  )
  return rows.length > 0
}

/**
 * At most 100 running tasks whose lease expired, locked for this transaction. SKIP LOCKED: two
 * nodes sweeping at once each end other tasks, neither waits for the other.
 */
export const expiredLeasesForUpdate = (columns: string, table: string): string =>
  `SELECT ${columns} FROM ${table} WHERE NOT terminal AND lease_until < clock_timestamp()
    ORDER BY lease_until LIMIT 100 FOR UPDATE SKIP LOCKED`
