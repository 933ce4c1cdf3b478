import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import type { StreamHistory } from './stream-history.js'
import { SessionQuota, type SessionLimits, type SessionOwner, type SessionRefusal } from './session-quota.js'
import type { JsonObject, LogLevel } from './wire.js'

/** What survives a restart: kept in LMDB (`mcp-sessions`); subscriptions are kept beside it, one key each. */
export interface SessionRecord {
  id: string
  endpoint: string
  version: string
  clientCapabilities: JsonObject
  clientInfo?: JsonObject
  initialized: boolean
  logLevel?: LogLevel
  /** Only in records written before subscriptions had their own keys; moved out on restore. */
  subscriptions?: string[]
  createdAt: number
  lastSeen: number
  /** Who opened it (absent in records written before owners were kept: nobody can use such a session). */
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
  /** Subscribed resource URIs (written one LMDB key each through SessionStore.subscribe). */
  readonly subscriptions: Set<string>
  private nextId = 1
  constructor(
    readonly record: SessionRecord,
    subscriptions: Iterable<string> = []
  ) {
    this.subscriptions = new Set(subscriptions)
  }
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

/** What one session may store: a session's client data is capped. */
export interface SessionStorageLimits {
  capabilitiesBytes: number
  clientInfoBytes: number
  subscriptions: number
  uriBytes: number
}

/** Every known session (live or only in LMDB): who opened it and when it was last seen. */
interface Known {
  owner: SessionOwner
  lastSeen: number
}

/** At the cap, at most this many anonymous sessions are looked at for one to end: a create stays O(1). */
const EVICTION_SCAN = 32

function ownerOf(rec: SessionRecord): SessionOwner {
  const principal = rec.principal ?? null
  return principal === null && rec.address !== undefined ? { principal, address: rec.address } : { principal }
}

/** Keys of the subscriptions database: the session id (a UUID, no space) and the URI. */
const subKey = (id: string, uri: string): string => `${id} ${uri}`
const subRange = (id: string): { start: string; end: string } => ({ start: `${id} `, end: `${id}!` })

/**
 * Session dialect state: an idle TTL (default 30 min), a server-wide cap (default 10 000) of which
 * a reserve is kept for authenticated principals, and caps per principal and per anonymous client
 * address. Records are written through to LMDB, so a restarted server restores a live session on
 * its next request and counts it against its owner. `lastSeen` is persisted at most once a minute
 * per session to keep the hot path write-free.
 *
 * Bookkeeping is O(1) per create and per request: `known` is ordered by last sight (the sweep
 * walks it from the oldest and stops at the first one still fresh), `anonymous` is the eviction
 * order; neither the sweep nor a create reads LMDB.
 */
export class SessionStore {
  private readonly live = new Map<string, Session>()
  private readonly dead = new Set<string>()
  private readonly known = new Map<string, Known>()
  /** Anonymous sessions, least recently seen (or least recently found busy) first. */
  private readonly anonymous = new Set<string>()
  private readonly quota: SessionQuota
  private readonly sweeper: NodeJS.Timeout

  constructor(
    private readonly db: Database<SessionRecord, string>,
    private readonly subs: Database<1, string>,
    private readonly ttlMs: number,
    limits: SessionLimits,
    readonly storage: SessionStorageLimits
  ) {
    this.quota = new SessionQuota(limits)
    const restored: [string, Known][] = []
    for (const { key, value } of db.getRange())
      restored.push([key, { owner: ownerOf(value), lastSeen: value.lastSeen }])
    restored.sort((a, b) => a[1].lastSeen - b[1].lastSeen)
    for (const [id, k] of restored) this.track(id, k)
    // subscriptions whose session was removed by a process that died before removing them
    for (const key of subs.getKeys()) if (!this.known.has(key.slice(0, key.indexOf(' ')))) void subs.remove(key)
    this.sweeper = setInterval(
      () => {
        this.sweep()
      },
      Math.min(60_000, Math.max(1000, ttlMs / 4))
    )
    this.sweeper.unref()
  }

  get size(): number {
    return this.known.size
  }

  private track(id: string, k: Known): void {
    this.known.set(id, k)
    this.quota.add(k.owner)
    if (k.owner.principal === null) this.anonymous.add(id)
  }

  /**
   * Creates a session for `owner`, or says which limit refuses it. Anonymous callers hold at most
   * the cap minus the authenticated reserve; at that limit, or at the server-wide cap, the least
   * recently seen idle anonymous session makes room, so anonymous clients alone cannot lock out
   * everyone else.
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
    const limits = this.quota.limits
    const full = this.size >= limits.max
    const anonymousFull = owner.principal === null && this.anonymous.size >= limits.max - limits.reserve
    if ((full || anonymousFull) && !this.evictIdleAnonymous()) return this.quota.refusal(full ? 'server' : 'anonymous')
    const now = Date.now()
    const rec: SessionRecord = {
      id: randomUUID(),
      endpoint,
      version,
      clientCapabilities,
      initialized: false,
      createdAt: now,
      lastSeen: now,
      principal: owner.principal
    }
    if (owner.address !== undefined) rec.address = owner.address
    if (clientInfo !== undefined) rec.clientInfo = clientInfo
    // written (encoded) before it is counted: a record that cannot be written leaves no ghost behind
    void this.db.put(rec.id, rec)
    const s = new Session(rec)
    this.live.set(rec.id, s)
    this.track(rec.id, { owner: ownerOf(rec), lastSeen: now })
    return s
  }

  /** Ends the least recently seen anonymous session with nothing open on it; false when none is found. */
  private evictIdleAnonymous(): boolean {
    const busy: string[] = []
    let victim: string | undefined
    for (const id of this.anonymous) {
      if (busy.length === EVICTION_SCAN) break
      const s = this.live.get(id)
      if (s === undefined || s.idle) {
        victim = id
        break
      }
      busy.push(id)
    }
    // busy ones go to the back, so the next create looks past them
    for (const id of busy) {
      this.anonymous.delete(id)
      this.anonymous.add(id)
    }
    return victim !== undefined && this.delete(victim)
  }

  /** The session for an id (restored from LMDB after a restart); undefined when unknown or expired. */
  get(id: string): Session | undefined {
    if (this.dead.has(id) || !this.known.has(id)) return undefined
    let s = this.live.get(id)
    if (s === undefined) {
      const rec = this.db.get(id)
      if (rec === undefined) {
        // counted but never written (a failed put): stop counting it
        this.delete(id)
        return undefined
      }
      s = this.restore(rec)
      this.live.set(id, s)
    }
    const now = Date.now()
    if (now - s.record.lastSeen > this.ttlMs) {
      this.delete(id)
      return undefined
    }
    this.touch(s, now)
    return s
  }

  /** The session only when `caller` is the one that opened it: its principal, or anonymous from its address. */
  owned(id: string, caller: SessionOwner): Session | undefined {
    const k = this.known.get(id)
    if (k === undefined || !sameOwner(k.owner, caller)) return undefined
    return this.get(id)
  }

  /** Whether `caller` may use `s` (a WebSocket's session, whose principal can change mid-connection). */
  ownedBy(s: Session, caller: SessionOwner): boolean {
    return sameOwner(ownerOf(s.record), caller)
  }

  /** The session was used: it moves to the back of the sweep and eviction orders. */
  touch(s: Session, now = Date.now()): void {
    const k = this.known.get(s.id)
    if (k === undefined || this.live.get(s.id) !== s) return
    this.known.delete(s.id)
    k.lastSeen = now
    this.known.set(s.id, k)
    if (this.anonymous.delete(s.id)) this.anonymous.add(s.id)
    if (now - s.record.lastSeen > 60_000) {
      s.record.lastSeen = now
      void this.db.put(s.id, s.record)
    } else s.record.lastSeen = now
  }

  private restore(rec: SessionRecord): Session {
    const uris: string[] = []
    for (const key of this.subs.getKeys(subRange(rec.id))) uris.push(key.slice(rec.id.length + 1))
    if (rec.subscriptions !== undefined) {
      // a record from before subscriptions had keys of their own: move them out once
      for (const uri of rec.subscriptions) {
        uris.push(uri)
        void this.subs.put(subKey(rec.id, uri), 1)
      }
      delete rec.subscriptions
      void this.db.put(rec.id, rec)
    }
    return new Session(rec, uris)
  }

  save(s: Session): void {
    if (this.live.get(s.id) === s) void this.db.put(s.id, s.record)
  }

  /** Adds a subscription: one key written, the session record untouched. */
  subscribe(s: Session, uri: string): void {
    if (this.live.get(s.id) !== s || s.subscriptions.has(uri)) return
    s.subscriptions.add(uri)
    void this.subs.put(subKey(s.id, uri), 1)
  }

  unsubscribe(s: Session, uri: string): void {
    if (this.live.get(s.id) !== s || !s.subscriptions.delete(uri)) return
    void this.subs.remove(subKey(s.id, uri))
  }

  delete(id: string): boolean {
    const k = this.known.get(id)
    if (k === undefined || this.dead.has(id)) return false
    const s = this.live.get(id)
    this.live.delete(id)
    s?.failPending('session ended')
    s?.closeChannel?.()
    this.known.delete(id)
    this.anonymous.delete(id)
    this.quota.remove(k.owner)
    // async writes commit in order, so the remove lands after any pending put; until it does, the
    // tombstone keeps get() from restoring the session out of LMDB
    this.dead.add(id)
    const uris =
      s !== undefined ? s.subscriptions : this.subs.getKeys(subRange(id)).map((key) => key.slice(id.length + 1))
    for (const uri of uris) void this.subs.remove(subKey(id, uri))
    void this.db.remove(id).finally(() => {
      this.dead.delete(id)
    })
    return true
  }

  liveSessions(): IterableIterator<Session> {
    return this.live.values()
  }

  /** Ends sessions idle past the TTL: walks from the least recently seen, stops at the first fresh one. */
  sweep(): void {
    const now = Date.now()
    const expired: string[] = []
    for (const [id, k] of this.known) {
      if (now - k.lastSeen <= this.ttlMs) break
      expired.push(id)
    }
    for (const id of expired) this.delete(id)
  }

  close(): void {
    clearInterval(this.sweeper)
  }
}

function sameOwner(owner: SessionOwner, caller: SessionOwner): boolean {
  if (owner.principal !== null) return caller.principal === owner.principal
  return caller.principal === null && owner.address !== undefined && caller.address === owner.address
}
