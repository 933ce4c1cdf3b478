import type { Database } from 'lmdb'
import { RetainedLog, type LogKey, type WriteFailureReport } from '../store/index.js'
import type { ControlAuditEntry } from '../contracts/index.js'

/**
 * The control audit log: every admin write attempt, allowed or denied. Newest entries are kept in
 * a ring buffer and every entry in LMDB (bounded by `retention`), reloaded at start-up.
 */
export class ControlAuditLog {
  private readonly log: RetainedLog<ControlAuditEntry>

  constructor(
    capacity: number,
    db?: Database<ControlAuditEntry, LogKey>,
    retention = 100_000,
    onWriteFailure?: WriteFailureReport
  ) {
    this.log = new RetainedLog({ name: 'audit', capacity, db, retention, onWriteFailure })
  }

  /** Records one outcome; resolves when it is durable (when backed by LMDB), rejects if that write failed. */
  record(principal: string | null, action: string, target: string, success: boolean, message = ''): Promise<void> {
    return this.log.append({
      timestamp: new Date().toISOString(),
      principal: principal ?? 'anonymous',
      action,
      target,
      success,
      message
    })
  }

  /** The most recent `limit` entries, oldest first. */
  entries(limit = 100): ControlAuditEntry[] {
    return this.log.oldestFirst(limit)
  }

  /** Reads from LMDB (all retained entries), newest first. */
  history(limit = 100): ControlAuditEntry[] {
    return this.log.stored(limit)
  }
}
