import type { Database } from 'lmdb'
import { storeKindOf, type Config } from '../config/index.js'
import {
  PostgresLog,
  SplitLog,
  type SharedPostgres,
  type Store,
  type AnonymousDeniedCounts,
  type AnonymousPartOptions,
  type LogKey,
  type LogPage,
  type LogPart,
  type WriteFailureReport
} from '../store/index.js'
import type { ControlAuditEntry } from '../contracts/index.js'

/** Where the attempts of callers without a principal go, and who counts them (each append says its kind). */
export type AnonymousAudit = Omit<AnonymousPartOptions<ControlAuditEntry>, 'kindOf'>

/**
 * The control audit log: every admin write attempt, allowed or denied. Newest entries are kept in
 * a ring buffer and every entry in LMDB (bounded by `retention`), reloaded at start-up. With
 * `anonymous`, attempts refused before a principal was known (no principal, or the write flag
 * off) live in a part of their own, counted and sampled, so a flood of them never pushes an
 * operator's entry out. With `shared` (cluster mode), every entry is kept in PostgreSQL instead of
 * LMDB, and `read` lists every node's entries.
 */
export class ControlAuditLog {
  private readonly log: SplitLog<ControlAuditEntry>
  private readonly shared: PostgresLog<ControlAuditEntry> | undefined

  constructor(
    capacity: number,
    db?: Database<ControlAuditEntry, LogKey>,
    retention = 100_000,
    onWriteFailure?: WriteFailureReport,
    anonymous?: AnonymousAudit,
    shared?: PostgresLog<ControlAuditEntry>
  ) {
    this.shared = shared
    this.log = new SplitLog({ name: 'audit', capacity, db, retention, onWriteFailure }, anonymous, shared)
  }

  /** Records one outcome; resolves when it is durable (LMDB or PostgreSQL), rejects if that write failed. */
  record(principal: string | null, action: string, target: string, success: boolean, message = ''): Promise<void> {
    return this.log.append(
      {
        timestamp: new Date().toISOString(),
        principal: principal ?? ANONYMOUS,
        action,
        target,
        success,
        message
      },
      // a caller without a principal is never allowed to write: each of its entries is a refusal
      principal === null ? 'anonymous-denied' : 'kept'
    )
  }

  /** The most recent `limit` entries, oldest first. */
  entries(limit = 100): ControlAuditEntry[] {
    return this.log.newest(limit).reverse()
  }

  /**
   * One page of the most recent entries below the cursor (from the newest without one), oldest
   * first within the page; `nextCursor` reads the page before it. Undefined for a bad cursor.
   * `part` lists only the entries of known callers (`main`) or only the anonymous ones.
   */
  page(limit: number, cursor?: string, part?: LogPart): LogPage<ControlAuditEntry> | undefined {
    const page = this.log.page(limit, cursor, part)
    if (page !== undefined) page.entries.reverse()
    return page
  }

  /**
   * `page` of the log every node shares when there is one (each entry with its `node`), else of
   * this node's; what the admin route and its MCP tool answer.
   */
  async read(limit: number, cursor?: string, part?: LogPart): Promise<LogPage<ControlAuditEntry> | undefined> {
    if (this.shared === undefined) return this.page(limit, cursor, part)
    const page = await this.shared.page(limit, cursor, part)
    if (page !== undefined) page.entries.reverse()
    return page
  }

  get anonymousDenied(): AnonymousDeniedCounts {
    return this.log.anonymousDenied
  }

  /** Reads from LMDB (all retained entries), newest first. */
  history(limit = 100): ControlAuditEntry[] {
    const merged = this.log.stored(limit).flat()
    // ISO timestamps of one clock sort as text; the sort is stable, so ties keep each part's order
    merged.sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
    return merged.slice(0, limit)
  }
}

/** What `auditLogFromConfig` needs beside the configuration. */
export interface AuditLogDeps {
  store: Store
  node: string
  /** The shared pool, for `platform.admin.audit-store: postgres`. */
  postgres: (key: string) => SharedPostgres
  onWriteFailure: WriteFailureReport
  onDenied: (kept: boolean) => void
}

/**
 * The control audit log `platform.admin.audit-store` names: LMDB (the default on one node),
 * PostgreSQL (the default in cluster mode: every node lists every node's entries, the ring keeps
 * this node's newest) or memory.
 */
export function auditLogFromConfig(config: Config, deps: AuditLogDeps): ControlAuditLog {
  const key = 'platform.admin.audit-store'
  const kind = storeKindOf(config, key)
  const retention = config.get('platform.admin.audit-retention')
  const shared =
    kind === 'postgres'
      ? new PostgresLog<ControlAuditEntry>({
          pg: deps.postgres(key),
          name: 'audit',
          node: deps.node,
          retention,
          onWriteFailure: deps.onWriteFailure
        })
      : undefined
  const db = (name: string) => (kind === 'lmdb' ? deps.store.db<ControlAuditEntry, LogKey>(name) : undefined)
  return new ControlAuditLog(
    config.get('platform.admin.audit-capacity'),
    db('audit'),
    retention,
    deps.onWriteFailure,
    {
      db: db('audit-anonymous'),
      keptPerSecond: config.get('platform.admin.audit-anonymous-per-second'),
      onDenied: deps.onDenied
    },
    shared
  )
}

/** The principal an entry names when the caller had none. */
const ANONYMOUS = 'anonymous'
