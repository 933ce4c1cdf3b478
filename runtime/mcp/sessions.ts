import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import type { StreamHistory } from './stream-history.js'
import { SessionQuota, type SessionLimits, type SessionOwner, type SessionRefusal } from './session-quota.js'
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
  /** Who opened it (absent in records written before owners were kept: counted as anonymous, no address). */
  principal?: string | null
  address?: string
}

/** A live session: the record plus what only exists in this process (GET stream, pending requests). */
export class Session {
  /** Notification channel: the GET SSE stream or the WebSocket the session was opened on. */
  channel: ((msg: JsonObject) => boolean) | undefined
  /** Ends the channel's stream (GET SSE) when the session ends. */
  closeChannel: (() => void) | undefined
  /** The GET stream's events for Last-Event-ID replay; set by the first GET, in memory only. */
  history: StreamHistory | undefined
  readonly pending = new Map<string | number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  /** Requests in flight, by JSON-RPC id, so notifications/cancelled can abort them. */
  readonly inflight = new Map<string | number, () => void>()
  private nextId = 1
  constructor(readonly record: SessionRecord) {}
  get id(): string {
    return this.record.id
  }
  newRequestId(): string {
    return `s-${this.nextId++}`
  }
  /** A notification: on the open channel, or kept for the GET stream's replay while none is open. */
  notify(msg: JsonObject): void {
    if (this.channel !== undefined) this.channel(msg)
    else this.history?.record(msg)
  }
  failPending(why: string): void {
    for (const p of this.pending.values()) p.reject(new Error(why))
    this.pending.clear()
  }

  /** Nothing open on it: no notification channel, no request in flight either way. */
  get idle(): boolean {
    return this.channel === undefined && this.inflight.size === 0 && this.pending.size === 0
  }
}

function ownerOf(rec: SessionRecord): SessionOwner {
  const principal = rec.principal ?? null
  return principal === null && rec.address !== undefined ? { principal, address: rec.address } : { principal }
}

/**
 * Session dialect state: an idle TTL (default 30 min), a server-wide cap (default 10 000) and caps
 * per principal and per anonymous client address. Records are written through to LMDB, so a
 * restarted server restores a live session on its next request and counts it against its owner.
 * `lastSeen` is persisted at most once a minute per session to keep the hot path write-free.
 */
export class SessionStore {
  private readonly live = new Map<string, Session>()
  private readonly dead = new Set<string>()
  /** Every known session (live or only in LMDB) and who opened it: the counts and eviction read it. */
  private readonly owners = new Map<string, SessionOwner>()
  private readonly quota: SessionQuota
  private readonly sweeper: NodeJS.Timeout

  constructor(
    private readonly db: Database<SessionRecord, string>,
    private readonly ttlMs: number,
    limits: SessionLimits
  ) {
    this.quota = new SessionQuota(limits)
    for (const { key, value } of db.getRange()) {
      const owner = ownerOf(value)
      this.owners.set(key, owner)
      this.quota.add(owner)
    }
    this.sweeper = setInterval(
      () => {
        this.sweep()
      },
      Math.min(60_000, Math.max(1000, ttlMs / 4))
    )
    this.sweeper.unref()
  }

  get size(): number {
    return this.owners.size
  }

  /**
   * Creates a session for `owner`, or says which limit refuses it. At the server-wide cap the
   * least recently seen idle anonymous session makes room, so anonymous clients alone cannot lock
   * out everyone else.
   */
  create(
    endpoint: string,
    version: string,
    clientCapabilities: JsonObject,
    clientInfo: JsonObject | undefined,
    owner: SessionOwner
  ): Session | SessionRefusal {
    const refused = this.quota.check(owner)
    if (refused !== undefined) return refused
    if (this.size >= this.quota.limits.max) {
      this.sweep()
      if (this.size >= this.quota.limits.max && !this.evictIdleAnonymous()) return this.quota.refusal('server')
    }
    const now = Date.now()
    const rec: SessionRecord = {
      id: randomUUID(),
      endpoint,
      version,
      clientCapabilities,
      initialized: false,
      subscriptions: [],
      createdAt: now,
      lastSeen: now,
      principal: owner.principal
    }
    if (owner.address !== undefined) rec.address = owner.address
    if (clientInfo !== undefined) rec.clientInfo = clientInfo
    const s = new Session(rec)
    this.live.set(rec.id, s)
    const o = ownerOf(rec)
    this.owners.set(rec.id, o)
    this.quota.add(o)
    void this.db.put(rec.id, rec)
    return s
  }

  /** Ends the least recently seen anonymous session with nothing open on it; false when there is none. */
  private evictIdleAnonymous(): boolean {
    let victim: string | undefined
    let oldest = Infinity
    for (const [id, owner] of this.owners) {
      if (owner.principal !== null || this.dead.has(id)) continue
      const s = this.live.get(id)
      if (s !== undefined && !s.idle) continue
      const seen = s?.record.lastSeen ?? this.db.get(id)?.lastSeen ?? 0
      if (seen < oldest) {
        oldest = seen
        victim = id
      }
    }
    return victim !== undefined && this.delete(victim)
  }

  /** The session for an id (restored from LMDB after a restart); undefined when unknown or expired. */
  get(id: string): Session | undefined {
    if (this.dead.has(id)) return undefined
    let s = this.live.get(id)
    const now = Date.now()
    if (s === undefined) {
      const rec = this.db.get(id)
      if (rec === undefined) return undefined
      s = new Session(rec)
      this.live.set(id, s)
    }
    if (now - s.record.lastSeen > this.ttlMs) {
      this.delete(id)
      return undefined
    }
    if (now - s.record.lastSeen > 60_000) {
      s.record.lastSeen = now
      void this.db.put(id, s.record)
    } else s.record.lastSeen = now
    return s
  }

  save(s: Session): void {
    if (this.live.get(s.id) === s) void this.db.put(s.id, s.record)
  }

  delete(id: string): boolean {
    const s = this.live.get(id)
    const known = !this.dead.has(id) && (s !== undefined || this.db.get(id) !== undefined)
    if (!known) return false
    this.live.delete(id)
    s?.failPending('session ended')
    s?.closeChannel?.()
    const owner = this.owners.get(id)
    if (owner !== undefined) {
      this.owners.delete(id)
      this.quota.remove(owner)
    }
    // async writes commit in order, so the remove lands after any pending put; until it does, the
    // tombstone keeps get() from restoring the session out of LMDB
    this.dead.add(id)
    void this.db.remove(id).finally(() => {
      this.dead.delete(id)
    })
    return true
  }

  liveSessions(): IterableIterator<Session> {
    return this.live.values()
  }

  sweep(): void {
    const now = Date.now()
    for (const { key, value } of this.db.getRange()) {
      const live = this.live.get(key)
      const seen = live?.record.lastSeen ?? value.lastSeen
      if (now - seen > this.ttlMs) this.delete(key)
    }
  }

  close(): void {
    clearInterval(this.sweeper)
  }
}
