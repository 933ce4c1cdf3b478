import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import { entryCount } from '../store/index.js'
import type { StreamHistory } from './stream-history.js'
import type { JsonObject, LogLevel } from './wire.js'

/** What survives a restart: kept in LMDB (`mcp-sessions`). */
export interface SessionRecord {
  id: string
  endpoint: string
  version: string
  clientCapabilities: JsonObject
  clientInfo?: JsonObject
  initialized: boolean
  logLevel?: LogLevel
  subscriptions: string[]
  createdAt: number
  lastSeen: number
}

/** A live session: the record plus what only exists in this process (GET stream, pending requests). */
export class Session {
  /** Notification channel: the GET SSE stream or the WebSocket the session was opened on. */
  channel: ((msg: JsonObject) => boolean) | undefined
  /** Ends the channel's stream (GET SSE) when the session ends. */
  closeChannel: (() => void) | undefined
  /** The GET stream's events for Last-Event-ID replay; set by the first GET, in memory only. */
  history: StreamHistory | undefined
  readonly pending = new Map<string | number, { resolve: (v: unknown) => void, reject: (e: Error) => void }>()
  /** Requests in flight, by JSON-RPC id, so notifications/cancelled can abort them. */
  readonly inflight = new Map<string | number, () => void>()
  private nextId = 1
  constructor (readonly record: SessionRecord) {}
  get id (): string { return this.record.id }
  newRequestId (): string { return `s-${this.nextId++}` }
  /** A notification: on the open channel, or kept for the GET stream's replay while none is open. */
  notify (msg: JsonObject): void {
    if (this.channel !== undefined) this.channel(msg)
    else this.history?.record(msg)
  }
  failPending (why: string): void {
    for (const p of this.pending.values()) p.reject(new Error(why))
    this.pending.clear()
  }
}

/**
 * Session dialect state: an idle TTL (default 30 min) and a cap (default 10 000). Records are
 * written through to LMDB, so a restarted server restores a live session on its next request.
 * `lastSeen` is persisted at most once a minute per session to keep the hot path write-free.
 */
export class SessionStore {
  private readonly live = new Map<string, Session>()
  private readonly dead = new Set<string>()
  private count: number
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly db: Database<SessionRecord, string>, private readonly ttlMs: number, readonly cap: number) {
    this.count = entryCount(db)
    this.sweeper = setInterval(() => { this.sweep() }, Math.min(60_000, Math.max(1000, ttlMs / 4)))
    this.sweeper.unref()
  }

  get size (): number { return this.count }

  /** Creates a session; undefined when the cap is reached. */
  create (endpoint: string, version: string, clientCapabilities: JsonObject, clientInfo: JsonObject | undefined): Session | undefined {
    if (this.count >= this.cap) { this.sweep(); if (this.count >= this.cap) return undefined }
    const now = Date.now()
    const rec: SessionRecord = { id: randomUUID(), endpoint, version, clientCapabilities, initialized: false, subscriptions: [], createdAt: now, lastSeen: now }
    if (clientInfo !== undefined) rec.clientInfo = clientInfo
    const s = new Session(rec)
    this.live.set(rec.id, s)
    this.count++
    void this.db.put(rec.id, rec)
    return s
  }

  /** The session for an id (restored from LMDB after a restart); undefined when unknown or expired. */
  get (id: string): Session | undefined {
    if (this.dead.has(id)) return undefined
    let s = this.live.get(id)
    const now = Date.now()
    if (s === undefined) {
      const rec = this.db.get(id)
      if (rec === undefined) return undefined
      s = new Session(rec)
      this.live.set(id, s)
    }
    if (now - s.record.lastSeen > this.ttlMs) { this.delete(id); return undefined }
    if (now - s.record.lastSeen > 60_000) { s.record.lastSeen = now; void this.db.put(id, s.record) } else s.record.lastSeen = now
    return s
  }

  save (s: Session): void { if (this.live.get(s.id) === s) void this.db.put(s.id, s.record) }

  delete (id: string): boolean {
    const s = this.live.get(id)
    const known = !this.dead.has(id) && (s !== undefined || this.db.get(id) !== undefined)
    if (!known) return false
    this.live.delete(id)
    s?.failPending('session ended')
    s?.closeChannel?.()
    this.count = Math.max(0, this.count - 1)
    // async writes commit in order, so the remove lands after any pending put; until it does, the
    // tombstone keeps get() from restoring the session out of LMDB
    this.dead.add(id)
    void this.db.remove(id).finally(() => { this.dead.delete(id) })
    return true
  }

  liveSessions (): IterableIterator<Session> { return this.live.values() }

  sweep (): void {
    const now = Date.now()
    for (const { key, value } of this.db.getRange()) {
      const live = this.live.get(key)
      const seen = live?.record.lastSeen ?? value.lastSeen
      if (now - seen > this.ttlMs) this.delete(key)
    }
  }

  close (): void { clearInterval(this.sweeper) }
}
