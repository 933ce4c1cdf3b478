/**
 * GovernanceDecisionLog: every policy evaluation the gate runs, newest kept in a ring buffer
 * (`platform.ai.governance.decision-log.capacity`) and all of them in LMDB up to a retention
 * bound. It also answers the learning-signal loop: recent deny and prefer decisions for a subject.
 */
import type { Database } from 'lmdb'
import { RingBuffer, entryCount } from '../store/index.js'
import type { DecisionEntry as AuditEntry } from '../contracts/index.js'

interface Keyed { key: [number, number], entry: AuditEntry }

export interface Subject { conversationId?: string | null, sessionId?: string | null, userId?: string | null }

export class GovernanceDecisionLog {
  /** Entries with their LMDB keys, so reads past the ring continue exactly where it ends. */
  private readonly ring: RingBuffer<Keyed>
  private seq = 0
  private writes = 0
  private readonly listeners: ((e: AuditEntry) => void)[] = []

  constructor (readonly capacity: number, private readonly db?: Database<AuditEntry, [number, number]>, private readonly retention = 100_000) {
    this.ring = new RingBuffer(capacity)
    if (db !== undefined) {
      const recent: Keyed[] = []
      for (const { key, value } of db.getRange({ reverse: true, limit: capacity })) recent.push({ key, entry: value })
      for (let i = recent.length - 1; i >= 0; i--) this.ring.push(recent[i]!)
      for (const last of db.getKeys({ reverse: true, limit: 1 })) this.seq = last[1] + 1
    }
  }

  /** Called for every recorded entry (the memory sink listens). A throwing listener is ignored. */
  onRecord (fn: (e: AuditEntry) => void): void { this.listeners.push(fn) }

  record (e: AuditEntry): void {
    const key: [number, number] = [Date.now(), this.seq++]
    this.ring.push({ key, entry: e })
    for (const fn of this.listeners) { try { fn(e) } catch { /* a sink never breaks a turn */ } }
    if (this.db === undefined) return
    void this.db.put(key, e).catch(() => {})
    if (++this.writes % 1000 === 0) void this.trim()
  }

  /** The newest `limit` entries, newest first; beyond the ring, read from LMDB. */
  recent (limit: number): AuditEntry[] {
    const inRing = this.ring.newest(limit)
    const out = inRing.map((k) => k.entry)
    // older entries live only in LMDB once the ring is full; continue below the oldest ring key
    if (out.length >= limit || this.db === undefined || this.ring.size < this.ring.capacity || inRing.length === 0) return out
    const start = inRing[inRing.length - 1]!.key
    for (const { key, value } of this.db.getRange({ reverse: true, start, limit: limit - out.length + 1 })) {
      if (key[0] === start[0] && key[1] === start[1]) continue
      out.push(value)
      if (out.length >= limit) break
    }
    return out
  }

  get size (): number { return this.ring.size }

  /**
   * Recent entries of the given decisions for a subject, newest first: the conversation's if it
   * has any, else the session's, else the user's (spec learning-signal loop, subject order).
   */
  forSubject (subject: Subject, decisions: readonly string[] = ['deny', 'prefer'], limit = 10): AuditEntry[] {
    const all = this.ring.newest().map((k) => k.entry)
    const keys: [string, string | null | undefined][] = [['conversation_id', subject.conversationId], ['session_id', subject.sessionId], ['user_id', subject.userId]]
    for (const [key, value] of keys) {
      if (value === undefined || value === null || value === '') continue
      const out: AuditEntry[] = []
      for (const e of all) {
        if (e.context_snapshot[key] === value && decisions.includes(e.decision)) { out.push(e); if (out.length >= limit) break }
      }
      if (out.length > 0) return out
    }
    return []
  }

  private async trim (): Promise<void> {
    const db = this.db!
    const excess = entryCount(db) - this.retention
    if (excess <= 0) return
    await db.transaction(() => { for (const key of db.getKeys({ limit: excess })) db.remove(key) })
  }
}
