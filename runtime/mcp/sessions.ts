import { randomUUID } from 'node:crypto'
import type { Backplane } from '../contracts/index.js'
import { forwardAnswer, receiveAnswers } from './server-request-answers.js'
import { Session, type SessionStorageLimits } from './session.js'
import type { SessionRecord, SessionRecords } from './session-records.js'
import { SessionQuota, type SessionLimits, type SessionOwner, type SessionRefusal } from './session-quota.js'
import type { JsonObject } from './wire.js'

export type { SessionRecord } from './session-records.js'
export { Session, type SessionStorageLimits } from './session.js'

/** Every known session (live, or only in this node's store): who opened it and when it was last seen. */
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

export interface SessionStoreOptions {
  /** A write or read of the store failed: reported (logged), never thrown at a request. */
  onError: (err: unknown, what: string) => void
  /**
   * With a store shared by several nodes: to tell the others when a session ends or changes, and
   * to relay notifications to the node holding a session's GET stream.
   */
  backplane?: Backplane
}

/** Backplane topics: one subscription each per node, never one per session or client. */
const ENDED = 'mcp/sessions/ended'
const CHANGED = 'mcp/sessions/changed'
const NOTIFY = 'mcp/sessions/notify'

/**
 * Session dialect state: an idle TTL (default 30 min), a server-wide cap (default 10 000) of which
 * a reserve is kept for authenticated principals, and caps per principal and per anonymous client
 * address. Records are written through to the session store (`SessionRecords`), so a restarted
 * server restores a live session on its next request and counts it against its owner.
 * `lastSeen` is persisted at most once a minute per session to keep the hot path write-free.
 *
 * On one node (LMDB) the bounds are counted here: O(1) per create and per request, `known` ordered
 * by last sight (the sweep walks it from the oldest and stops at the first one still fresh),
 * `anonymous` the eviction order; neither the sweep nor a create reads the store. With a store
 * shared by several nodes (Postgres) the store counts the bounds at each create, a request naming a
 * session this node does not hold reads it first (`fetch`), and the nodes tell each other over the
 * backplane when a session ends or changes, and relay notifications to the node holding the
 * session's GET stream.
 */
export class SessionStore {
  private readonly live = new Map<string, Session>()
  private readonly dead = new Set<string>()
  private readonly known = new Map<string, Known>()
  /** Anonymous sessions, least recently seen (or least recently found busy) first. */
  private readonly anonymous = new Set<string>()
  private readonly quota: SessionQuota
  private readonly sweeper: NodeJS.Timeout
  private readonly unsubscribes: (() => void)[] = []
  private readonly backplane: Backplane | undefined

  constructor(
    private readonly records: SessionRecords,
    private readonly ttlMs: number,
    limits: SessionLimits,
    readonly storage: SessionStorageLimits,
    private readonly opts: SessionStoreOptions
  ) {
    this.quota = new SessionQuota(limits)
    const restored = records
      .restore()
      .map(({ rec }): [string, Known] => [rec.id, { owner: ownerOf(rec), lastSeen: rec.lastSeen }])
    restored.sort((a, b) => a[1].lastSeen - b[1].lastSeen)
    for (const [id, k] of restored) this.track(id, k)
    this.sweeper = setInterval(
      () => {
        this.sweep()
      },
      Math.min(60_000, Math.max(1000, ttlMs / 4))
    )
    this.sweeper.unref()
    const backplane = records.shared ? opts.backplane : undefined
    this.backplane = backplane
    if (backplane !== undefined) {
      this.unsubscribes.push(
        backplane.subscribe(ENDED, (data) => {
          const id = idOf(data)
          if (id !== undefined) this.drop(id)
        }),
        backplane.subscribe(CHANGED, (data) => {
          const id = idOf(data)
          if (id !== undefined && this.live.has(id)) void this.reload(id)
        }),
        backplane.subscribe(NOTIFY, (data) => {
          const id = idOf(data)
          const msg = (data as { msg?: unknown }).msg
          // only a node holding the session's channel delivers it, and never sends it on again
          const s = id === undefined ? undefined : this.live.get(id)
          if (s?.channel !== undefined && typeof msg === 'object' && msg !== null) s.channel(msg as JsonObject)
        }),
        receiveAnswers(backplane, (id) => this.live.get(id))
      )
    }
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
  async create(
    endpoint: string,
    version: string,
    clientCapabilities: JsonObject,
    clientInfo: JsonObject | undefined,
    owner: SessionOwner
  ): Promise<Session | SessionRefusal> {
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
    if (this.records.shared) {
      const admitted = await this.records.admit(rec, owner, this.quota.limits, this.ttlMs)
      if ('scope' in admitted) return admitted
      if (admitted.evicted !== undefined) this.ended(admitted.evicted)
    } else {
      const refused = this.quota.check(owner)
      if (refused !== undefined) return refused
      const limits = this.quota.limits
      const full = this.size >= limits.max
      const anonymousFull = owner.principal === null && this.anonymous.size >= limits.max - limits.reserve
      if ((full || anonymousFull) && !this.evictIdleAnonymous())
        return this.quota.refusal(full ? 'server' : 'anonymous')
      // written (encoded) before it is counted: a record that cannot be written leaves no ghost behind
      this.write(this.records.put(rec))
    }
    const s = this.session(rec, [])
    this.live.set(rec.id, s)
    this.track(rec.id, { owner: ownerOf(rec), lastSeen: now })
    return s
  }

  private session(rec: SessionRecord, uris: Iterable<string>): Session {
    const s = new Session(rec, uris)
    const backplane = this.backplane
    if (backplane !== undefined) {
      s.relay = (msg) => backplane.publish(NOTIFY, { id: rec.id, msg })
      s.requestSuffix = `@${backplane.node}`
    }
    return s
  }

  /** A client's answer to a server request this node did not send: on to the node waiting for it. */
  forwardAnswer(s: Session, rid: string | number, msg: { result?: unknown; error?: unknown }): void {
    if (this.backplane !== undefined) forwardAnswer(this.backplane, s.id, rid, msg)
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

  /**
   * A shared store's session this node does not hold yet (or holds an old copy of), read before a
   * request that names it is dispatched; undefined (nothing to wait for) when there is nothing to read.
   */
  fetch(id: string): Promise<void> | undefined {
    if (!this.records.shared || this.dead.has(id)) return undefined
    const held = this.live.get(id)
    // a copy not seen here for half the TTL may have been used on other nodes since: read it again
    // rather than end a session that is alive elsewhere
    if (held !== undefined) return Date.now() - held.record.lastSeen > this.ttlMs / 2 ? this.reload(id) : undefined
    return this.records.load(id).then((kept) => {
      if (kept === undefined || this.live.has(id) || this.dead.has(id)) return
      if (!this.known.has(id)) this.track(id, { owner: ownerOf(kept.rec), lastSeen: kept.rec.lastSeen })
      this.live.set(id, this.session(kept.rec, kept.uris))
    })
  }

  /** Another node changed a session this node holds: its record and subscriptions are read again, its channel kept. */
  private async reload(id: string): Promise<void> {
    let kept
    try {
      kept = await this.records.load(id)
    } catch (err) {
      this.opts.onError(err, 'read')
      return
    }
    const s = this.live.get(id)
    if (s === undefined) return
    if (kept === undefined) {
      this.drop(id)
      return
    }
    Object.assign(s.record, kept.rec)
    s.subscriptions.clear()
    for (const uri of kept.uris) s.subscriptions.add(uri)
  }

  /** The session for an id (restored from this node's store after a restart); undefined when unknown or expired. */
  get(id: string): Session | undefined {
    if (this.dead.has(id) || !this.known.has(id)) return undefined
    let s = this.live.get(id)
    if (s === undefined) {
      const kept = this.records.read(id)
      if (kept === undefined) {
        // counted but never written (a failed put): stop counting it
        this.delete(id)
        return undefined
      }
      s = this.session(kept.rec, kept.uris)
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
      this.write(this.records.put(s.record))
    } else s.record.lastSeen = now
  }

  save(s: Session): void {
    if (this.live.get(s.id) !== s) return
    this.write(this.records.put(s.record), s.id)
  }

  /** Adds a subscription: one entry written, the session record untouched. */
  subscribe(s: Session, uri: string): void {
    if (this.live.get(s.id) !== s || s.subscriptions.has(uri)) return
    s.subscriptions.add(uri)
    this.write(this.records.subscribe(s.id, uri), s.id)
  }

  unsubscribe(s: Session, uri: string): void {
    if (this.live.get(s.id) !== s || !s.subscriptions.delete(uri)) return
    this.write(this.records.unsubscribe(s.id, uri), s.id)
  }

  /** A write of the store; once it lands, the other nodes holding session `changed` read it again. */
  private write(p: Promise<void>, changed?: string): void {
    const backplane = this.backplane
    void p.then(
      () => {
        if (backplane !== undefined && changed !== undefined) backplane.publish(CHANGED, { id: changed })
      },
      (err: unknown) => this.opts.onError(err, 'write')
    )
  }

  delete(id: string): boolean {
    if (!this.drop(id)) return false
    // async writes commit in order, so the remove lands after any pending put; until it does, the
    // tombstone keeps get() from restoring the session out of the store
    this.dead.add(id)
    void this.records
      .remove(id)
      .then(
        () => this.backplane?.publish(ENDED, { id }),
        (err: unknown) => this.opts.onError(err, 'remove')
      )
      .finally(() => {
        this.dead.delete(id)
      })
    return true
  }

  /** A session ended elsewhere (another node, the shared store's eviction): forgotten here, its channel closed. */
  private ended(id: string): void {
    this.drop(id)
    this.backplane?.publish(ENDED, { id })
  }

  /** Forgets a session on this node, without writing: ends its requests waiting on the client and its channel. */
  private drop(id: string): boolean {
    const k = this.known.get(id)
    if (k === undefined || this.dead.has(id)) return false
    const s = this.live.get(id)
    this.live.delete(id)
    s?.failPending('session ended')
    s?.closeChannel?.()
    this.known.delete(id)
    this.anonymous.delete(id)
    this.quota.remove(k.owner)
    return true
  }

  liveSessions(): IterableIterator<Session> {
    return this.live.values()
  }

  /**
   * Ends sessions idle past the TTL: walks from the least recently seen, stops at the first fresh
   * one. A shared store also ends the sessions no node has seen within it.
   */
  sweep(): void {
    const now = Date.now()
    const expired: string[] = []
    for (const [id, k] of this.known) {
      if (now - k.lastSeen <= this.ttlMs) break
      expired.push(id)
    }
    // a shared session may have been seen on another node since: forgotten here, kept there
    for (const id of expired)
      if (this.records.shared) this.drop(id)
      else this.delete(id)
    if (this.records.shared)
      void this.records.sweep(now, this.ttlMs).catch((err: unknown) => this.opts.onError(err, 'sweep'))
  }

  close(): void {
    clearInterval(this.sweeper)
    for (const u of this.unsubscribes.splice(0)) u()
  }
}

function idOf(data: unknown): string | undefined {
  const id = (data as { id?: unknown } | null)?.id
  return typeof id === 'string' ? id : undefined
}

function sameOwner(owner: SessionOwner, caller: SessionOwner): boolean {
  if (owner.principal !== null) return caller.principal === owner.principal
  return caller.principal === null && owner.address !== undefined && caller.address === owner.address
}
