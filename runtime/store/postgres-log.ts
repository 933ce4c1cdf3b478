/**
 * An append-only log in PostgreSQL that every node appends to and reads whole: the control audit
 * log, the decision log and the commitment records in cluster mode. Appends are buffered and
 * written as one multi-row INSERT per batch (a governed turn's evaluations, and those of the turns
 * beside it, cost one round trip, never one per entry); each append's promise resolves once its
 * batch is committed. Entries are ordered by the id the database gives them on insert, and every
 * entry read names the node that wrote it.
 */
import type { SharedPostgres, Schema } from './shared-postgres.js'
import { warn, type WriteFailureReport } from './write-failure.js'
import type { LogPage, LogPart } from './split-log.js'
import { decodeLogCursor, encodeLogCursor } from './log-cursor.js'

export const LOG_SCHEMA: Schema = {
  name: 'logs',
  migrations: [
    `CREATE TABLE platform_log_entries (
       log text COLLATE "C" NOT NULL,
       part text COLLATE "C" NOT NULL,
       id bigserial NOT NULL,
       node text NOT NULL,
       entry json NOT NULL,
       PRIMARY KEY (log, part, id)
     );
     CREATE INDEX platform_log_entries_order ON platform_log_entries (log, id);`
  ]
}

/** Entries in one INSERT at most; more wait for the next. */
const BATCH_MAX = 1000
/** Entries waiting for their INSERT at most (the server out of reach): more are refused and reported. */
const PENDING_MAX = 100_000
/** Entries this node writes between two retention trims (one DELETE per part). */
const TRIM_EVERY = 1000

/** An entry as read back: its own fields and the node that appended it. */
export type NodeEntry<T> = T & { node: string }

export interface PostgresLogOptions<T> {
  pg: SharedPostgres
  /** The log's name in the table and in metrics (`audit`, `decisions`, `commitments`). */
  name: string
  /** This node: recorded with each entry. */
  node: string
  /** Entries kept per part, across all nodes; older ones are deleted. */
  retention: number
  /**
   * A field consecutive entries often share by reference (a turn's context snapshot), written
   * once per object as JSON and placed last in the entry.
   */
  sharedField?: (keyof T & string) | undefined
  onWriteFailure?: WriteFailureReport | undefined
}

interface Batch {
  parts: LogPart[]
  json: string[]
  written: Promise<void>
  settle: (err?: unknown) => void
}

export class PostgresLog<T extends object> {
  readonly name: string
  private readonly queue: Batch[] = []
  private pending = 0
  private sending = false
  private last: Promise<void> = Promise.resolve()
  private sinceTrim = 0
  private readonly touched = new Set<LogPart>()
  private readonly failed: (err: unknown) => void
  /** The shared field's last object and its JSON: a turn's evaluations share one snapshot. */
  private sharedObject: unknown
  private sharedJson = ''

  constructor(private readonly opts: PostgresLogOptions<T>) {
    this.name = opts.name
    const report = opts.onWriteFailure ?? warn
    this.failed = (err) => report(this.name, err)
    opts.pg.use(LOG_SCHEMA)
    opts.pg.onClose(() => this.written().catch(() => {}))
  }

  /**
   * Adds one entry to `part`. Resolves once its batch is committed; rejects if that write failed
   * (reported either way, so callers may ignore the promise). An entry that is not JSON is refused
   * alone.
   */
  append(entry: T, part: LogPart = 'main'): Promise<void> {
    let json: string
    try {
      json = this.encode(entry)
    } catch (err) {
      this.failed(err)
      return quiet(Promise.reject(err as Error))
    }
    if (this.pending >= PENDING_MAX) {
      const err = new Error(`${this.pending} ${this.name} entries wait for ${this.opts.pg.where}: this one is dropped`)
      this.failed(err)
      return quiet(Promise.reject(err))
    }
    let b = this.queue.at(-1)
    // the batch in flight (the first, while sending) takes no more
    if (b === undefined || b.json.length >= BATCH_MAX || (this.sending && b === this.queue[0])) b = this.open()
    b.parts.push(part)
    b.json.push(json)
    this.pending++
    this.touched.add(part)
    return b.written
  }

  /** Resolves once every entry appended so far is committed (or its write failed). */
  written(): Promise<void> {
    return this.queue.at(-1)?.written ?? this.last
  }

  /**
   * One page of every node's entries below the cursor (from the newest without one), newest
   * first, each with its `node`; undefined for a cursor this log did not write for the same part.
   * Waits for this node's own appends first, so a writer reads what it wrote.
   */
  async page(limit: number, cursor?: string, part?: LogPart): Promise<LogPage<NodeEntry<T>> | undefined> {
    const label = `${this.name}:${part ?? 'all'}:shared`
    let below = Number.MAX_SAFE_INTEGER
    if (cursor !== undefined) {
      const bounds = decodeLogCursor(cursor, label, 1)
      if (bounds === undefined) return undefined
      below = bounds[0]![0]
    }
    await this.written().catch(() => {})
    const parts: LogPart[] = part === undefined ? ['main', 'anonymous'] : [part]
    const { rows } = await this.opts.pg.query<{ id: string; node: string; entry: T }>(
      LOG_SCHEMA,
      `SELECT id, node, entry FROM platform_log_entries
        WHERE log = $1 AND part = ANY($2) AND id < $3 ORDER BY id DESC LIMIT $4`,
      [this.name, parts, below, limit + 1]
    )
    const entries = rows.slice(0, limit).map((r) => ({ ...r.entry, node: r.node }))
    if (rows.length <= limit) return { entries }
    return { entries, nextCursor: encodeLogCursor(label, [[Number(rows[limit - 1]!.id), 0]]) }
  }

  private encode(entry: T): string {
    const f = this.opts.sharedField
    if (f === undefined) return JSON.stringify(entry)
    const shared = entry[f]
    if (shared === undefined) return JSON.stringify(entry)
    if (shared !== this.sharedObject) {
      this.sharedJson = JSON.stringify(shared)
      this.sharedObject = shared
    }
    const rest = JSON.stringify({ ...entry, [f]: undefined })
    return rest === '{}' ? `{"${f}":${this.sharedJson}}` : `${rest.slice(0, -1)},"${f}":${this.sharedJson}}`
  }

  private open(): Batch {
    let settle: (err?: unknown) => void = () => {}
    const written = quiet(
      new Promise<void>((resolve, reject) => {
        settle = (err) => (err === undefined ? resolve() : reject(err as Error))
      })
    )
    const b: Batch = { parts: [], json: [], written, settle }
    this.queue.push(b)
    // not at once: the entries of this turn of the event loop (and of turns beside it) share the INSERT
    if (!this.sending) setImmediate(this.send)
    return b
  }

  /**
   * Sends the oldest batch; one INSERT in flight at a time keeps this node's entries in order. A
   * retention trim, when due, runs between two batches.
   */
  private readonly send = (): void => {
    if (this.sending) return
    const b = this.queue[0]
    if (b === undefined) return
    this.sending = true
    void this.insert(b).finally(() => {
      this.queue.shift()
      this.pending -= b.json.length
      this.last = b.written
      this.sending = false
      if (this.queue.length > 0) this.send()
    })
  }

  private async insert(b: Batch): Promise<void> {
    try {
      await this.opts.pg.query(
        LOG_SCHEMA,
        `INSERT INTO platform_log_entries (log, part, node, entry)
         SELECT $1, t.p, $2, t.e::json FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(p, e, n) ORDER BY t.n`,
        [this.name, this.opts.node, b.parts, b.json]
      )
    } catch (err) {
      this.failed(err)
      b.settle(err)
      return
    }
    b.settle()
    this.sinceTrim += b.json.length
    if (this.sinceTrim < TRIM_EVERY) return
    this.sinceTrim = 0
    await this.trim()
  }

  /** Deletes each part's entries beyond the newest `retention`, whichever node wrote them. */
  private async trim(): Promise<void> {
    for (const part of this.touched)
      await this.opts.pg
        .query(
          LOG_SCHEMA,
          `DELETE FROM platform_log_entries WHERE log = $1 AND part = $2 AND id <= (
             SELECT id FROM platform_log_entries WHERE log = $1 AND part = $2 ORDER BY id DESC OFFSET $3 LIMIT 1)`,
          [this.name, part, this.opts.retention]
        )
        .catch(this.failed)
  }
}

/** A promise whose rejection was reported already: ignoring it must not be an unhandled rejection. */
function quiet(p: Promise<void>): Promise<void> {
  p.catch(() => {})
  return p
}
