/**
 * The journal in PostgreSQL, shared by every node on the database: a coordination run on one node
 * is read on any other. Events are ordered by `(at, seq)`: their instant, then the order of their
 * appends, `seq` coming from one sequence for every node. An agent index table makes the `agent`
 * filter a range over the rows it answers with, as the LMDB store's index does.
 */
import type { PostgresDb, Sql } from '../store/index.js'
import type { JournalFilter, JournalRecord, JournalStore } from './fleet-types.js'
import { agentsOf, checkRecords, timeOf } from './journal-record.js'
import { indexed } from './lmdb-journal-store.js'

/**
 * The schema, one entry per version (`PostgresDb.migrate`). Names are kept as the LMDB indexes
 * keep them (`indexed`: a long name, or one holding control characters, by its digest), so any
 * name fits a column and an index entry; reads check the event's own field. The count row is
 * what every append locks: appends from all nodes commit one after another, and the bound is
 * kept without counting the table.
 */
export const JOURNAL_MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_fleet_journal (
     seq bigserial PRIMARY KEY,
     at bigint NOT NULL,
     coordination text COLLATE "C" NOT NULL,
     event json NOT NULL
   );
   CREATE INDEX platform_fleet_journal_time ON platform_fleet_journal (at, seq);
   CREATE INDEX platform_fleet_journal_coordination ON platform_fleet_journal (coordination, at, seq);
   CREATE TABLE platform_fleet_journal_agents (
     agent text COLLATE "C" NOT NULL,
     at bigint NOT NULL,
     seq bigint NOT NULL REFERENCES platform_fleet_journal (seq) ON DELETE CASCADE,
     PRIMARY KEY (agent, at, seq)
   );
   CREATE INDEX platform_fleet_journal_agents_seq ON platform_fleet_journal_agents (seq);
   CREATE TABLE platform_fleet_journal_count (
     one boolean PRIMARY KEY DEFAULT true CHECK (one),
     n bigint NOT NULL
   );
   INSERT INTO platform_fleet_journal_count (n) VALUES (0);`
]

interface Row {
  at: string
  seq: string
  event: JournalRecord
}

export class PostgresJournalStore implements JournalStore {
  readonly kind = 'postgres'
  private closed = false
  /** The last append issued: the next one waits for it, so appends commit in call order. */
  private appending: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: PostgresDb,
    readonly maxEvents = 100_000
  ) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new RangeError('maxEvents must be a positive integer')
  }

  /** Creates or migrates the tables. */
  async start(): Promise<void> {
    await this.db.migrate('fleet-journal', JOURNAL_MIGRATIONS)
  }

  append(events: JournalRecord[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('journal store is closed'))
    try {
      checkRecords(events)
    } catch (err) {
      return Promise.reject(err as Error)
    }
    if (events.length === 0) return Promise.resolve()
    // serialised now: a caller changing its objects after the call changes nothing kept
    const rows = events.map((e) => ({ at: timeOf(e), e, json: JSON.stringify(e) }))
    const done = this.appending.then(() => this.db.transaction((sql) => this.insert(sql, rows)))
    this.appending = done.catch(() => {})
    return done
  }

  private async insert(sql: Sql, rows: { at: number; e: JournalRecord; json: string }[]): Promise<void> {
    const { rows: count } = await sql.query<{ n: string }>(
      'UPDATE platform_fleet_journal_count SET n = n + $1 RETURNING n',
      [rows.length]
    )
    // the count row is locked until commit: no other node takes seqs between these
    const { rows: seqs } = await sql.query<{ s: string }>(
      `SELECT nextval(pg_get_serial_sequence('platform_fleet_journal', 'seq')) AS s
         FROM generate_series(1, $1) ORDER BY 1`,
      [rows.length]
    )
    const seq = seqs.map((r) => r.s)
    await sql.query(
      `INSERT INTO platform_fleet_journal (seq, at, coordination, event)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::json[])`,
      [seq, rows.map((r) => r.at), rows.map((r) => indexed(r.e.coordinationId)), rows.map((r) => r.json)]
    )
    const agents: [string, number, string][] = []
    rows.forEach((r, i) => {
      for (const a of agentsOf(r.e)) agents.push([indexed(a), r.at, seq[i]!])
    })
    if (agents.length > 0)
      await sql.query(
        `INSERT INTO platform_fleet_journal_agents (agent, at, seq)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) ON CONFLICT DO NOTHING`,
        [agents.map((a) => a[0]), agents.map((a) => a[1]), agents.map((a) => a[2])]
      )
    const over = Number(count[0]!.n) - this.maxEvents
    if (over <= 0) return
    // the oldest in journal order go, with their index rows (cascade)
    const { rowCount } = await sql.query(
      `DELETE FROM platform_fleet_journal WHERE seq IN (
         SELECT seq FROM platform_fleet_journal ORDER BY at, seq LIMIT $1)`,
      [over]
    )
    await sql.query('UPDATE platform_fleet_journal_count SET n = n - $1', [rowCount ?? 0])
  }

  async query(f: JournalFilter): Promise<JournalRecord[]> {
    const where: string[] = []
    const params: unknown[] = []
    const param = (v: unknown): string => {
      params.push(v)
      return `$${params.length}`
    }
    // `at` holds whole milliseconds: an inclusive fractional bound rounds inwards
    if (f.since !== undefined) where.push(`x.at >= ${param(Math.ceil(f.since))}`)
    if (f.until !== undefined) where.push(`x.at <= ${param(Math.floor(f.until))}`)
    if (f.since !== undefined && f.until !== undefined && Math.ceil(f.since) > Math.floor(f.until)) return []
    if (f.coordinationId !== undefined) {
      const id = f.coordinationId
      where.push(`x.coordination = ${param(indexed(id))}`)
      return this.newest('platform_fleet_journal x', 'x.event', where, params, f.limit, (e) => e.coordinationId === id)
    }
    if (f.agent !== undefined) {
      const name = f.agent
      where.push(`x.agent = ${param(indexed(name))}`)
      return this.newest(
        'platform_fleet_journal_agents x JOIN platform_fleet_journal j ON j.seq = x.seq',
        'j.event',
        where,
        params,
        f.limit,
        (e) => agentsOf(e).includes(name)
      )
    }
    return this.newest('platform_fleet_journal x', 'x.event', where, params, f.limit, () => true)
  }

  /**
   * Newest first, at most `limit` events that `keep` accepts, read a page at a time: a digest
   * shared with another name (never in practice) costs another page, never a wrong answer.
   */
  private async newest(
    from: string,
    event: string,
    where: string[],
    params: unknown[],
    limit: number,
    keep: (e: JournalRecord) => boolean
  ): Promise<JournalRecord[]> {
    const out: JournalRecord[] = []
    let after: [string, string] | undefined
    while (out.length < limit) {
      const page = Math.min(limit - out.length, 1000)
      const p = [...params, page]
      const conds = [...where]
      if (after !== undefined) {
        p.push(after[0], after[1])
        conds.push(`(x.at, x.seq) < ($${p.length - 1}, $${p.length})`)
      }
      const { rows } = await this.db.query<Row>(
        `SELECT x.at, x.seq, ${event} AS event FROM ${from}
          ${conds.length > 0 ? `WHERE ${conds.join(' AND ')}` : ''}
          ORDER BY x.at DESC, x.seq DESC LIMIT $${params.length + 1}`,
        p
      )
      for (const r of rows) if (keep(r.event)) out.push(r.event)
      if (rows.length < page) break
      after = [rows[rows.length - 1]!.at, rows[rows.length - 1]!.seq]
    }
    return out.slice(0, limit)
  }

  async coordination(id: string): Promise<JournalRecord[]> {
    const { rows } = await this.db.query<{ event: JournalRecord }>(
      'SELECT event FROM platform_fleet_journal WHERE coordination = $1 ORDER BY at, seq',
      [indexed(id)]
    )
    return rows.map((r) => r.event).filter((e) => e.coordinationId === id)
  }

  /** Appends already resolved are committed; the pool belongs to the platform. */
  async close(): Promise<void> {
    this.closed = true
    await this.appending
  }
}
