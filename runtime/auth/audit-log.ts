import type { Database } from 'lmdb'
import {
  SplitLog,
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
 * operator's entry out.
 */
export class ControlAuditLog {
  private readonly log: SplitLog<ControlAuditEntry>

  constructor(
    capacity: number,
    db?: Database<ControlAuditEntry, LogKey>,
    retention = 100_000,
    onWriteFailure?: WriteFailureReport,
    anonymous?: AnonymousAudit
  ) {
    this.log = new SplitLog({ name: 'audit', capacity, db, retention, onWriteFailure }, anonymous)
  }

  /** Records one outcome; resolves when it is durable (when backed by LMDB), rejects if that write failed. */
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

/** The principal an entry names when the caller had none. */
const ANONYMOUS = 'anonymous'
