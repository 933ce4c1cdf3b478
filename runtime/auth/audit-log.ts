import type { Database } from 'lmdb'
import { RingBuffer, entryCount } from '../store/index.js'
import type { ControlAuditEntry as AuditEntry } from '../contracts/index.js'

/**
 * The control audit log: every admin write attempt, allowed or denied. Newest entries are kept in
 * a ring buffer and every entry in LMDB (bounded by `retention`), reloaded at start-up.
 */
export class ControlAuditLog {
  private readonly ring: RingBuffer<AuditEntry>
  private seq = 0
  private writes = 0

  constructor (capacity: number, private readonly db?: Database<AuditEntry, [number, number]>, private readonly retention = 100_000) {
    this.ring = new RingBuffer(capacity)
    if (db !== undefined) {
      const recent: AuditEntry[] = []
      for (const { value } of db.getRange({ reverse: true, limit: capacity })) recent.push(value)
      for (let i = recent.length - 1; i >= 0; i--) this.ring.push(recent[i]!)
      for (const last of db.getKeys({ reverse: true, limit: 1 })) this.seq = last[1] + 1
    }
  }

  /** Records one outcome; resolves when it is durable (when backed by LMDB). */
  record (principal: string | null, action: string, target: string, success: boolean, message = ''): Promise<void> {
    const entry: AuditEntry = { timestamp: new Date().toISOString(), principal: principal ?? 'anonymous', action, target, success, message }
    this.ring.push(entry)
    if (this.db === undefined) return Promise.resolve()
    const key: [number, number] = [Date.now(), this.seq++]
    const done = this.db.put(key, entry).then(() => undefined)
    if (++this.writes % 1000 === 0) void this.trim()
    return done
  }

  /** The most recent `limit` entries, oldest first (reference `entries(limit)`). */
  entries (limit = 100): AuditEntry[] { return this.ring.last(limit) }

  /** Reads from LMDB (all retained entries), newest first. */
  history (limit = 100): AuditEntry[] {
    if (this.db === undefined) return this.ring.newest(limit)
    const out: AuditEntry[] = []
    for (const { value } of this.db.getRange({ reverse: true, limit })) out.push(value)
    return out
  }

  private async trim (): Promise<void> {
    const db = this.db!
    const excess = entryCount(db) - this.retention
    if (excess <= 0) return
    await db.transaction(() => {
      for (const key of db.getKeys({ limit: excess })) db.remove(key)
    })
  }
}
