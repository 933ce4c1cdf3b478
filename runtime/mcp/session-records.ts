/**
 * Where session-dialect sessions are kept, behind one contract: LMDB (`mcp-sessions`, one node:
 * everything is read at start and synchronously after) or Postgres (shared by the nodes: a
 * session is read when a request names one this node does not hold, and the per-client bounds are
 * counted in the database). Subscriptions are kept one entry each, so a subscribe writes one row
 * and never the session record.
 */
import type { Database } from 'lmdb'
import type { SessionLimits, SessionOwner, SessionRefusal } from './session-quota.js'
import type { JsonObject, LogLevel } from './wire.js'

/** What survives a restart; subscriptions are kept beside it, one key each. */
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

export interface KeptSession {
  rec: SessionRecord
  uris: string[]
}

/** A shared store's answer to a create: kept (and the session ended to make room), or the limit that refused it. */
export type Admitted = { evicted?: string } | SessionRefusal

export interface SessionRecords {
  /** Shared with other nodes: a session may be created, used and ended elsewhere. */
  readonly shared: boolean
  /** Everything kept, for a store this node alone reads (read once at start); none for a shared one. */
  restore(): KeptSession[]
  /** A kept session read synchronously (one node's store); undefined for a shared one, which `load`s. */
  read(id: string): KeptSession | undefined
  load(id: string): Promise<KeptSession | undefined>
  /**
   * Keeps a new session after counting its owner's, the anonymous ones and all of them (shared
   * stores only: one node's store is counted by the node, synchronously).
   */
  admit(rec: SessionRecord, owner: SessionOwner, limits: SessionLimits, ttlMs: number): Promise<Admitted>
  put(rec: SessionRecord): Promise<void>
  remove(id: string): Promise<void>
  subscribe(id: string, uri: string): Promise<void>
  unsubscribe(id: string, uri: string): Promise<void>
  /** Ends the sessions not seen for `ttlMs` (shared stores: whichever node last held them). */
  sweep(now: number, ttlMs: number): Promise<void>
  readonly kind: 'lmdb' | 'postgres'
}

/** Keys of the subscriptions database: the session id (a UUID, no space) and the URI. */
const subKey = (id: string, uri: string): string => `${id} ${uri}`
const subRange = (id: string): { start: string; end: string } => ({ start: `${id} `, end: `${id}!` })

/** Sessions in two LMDB databases of this node's data directory. */
export class LmdbSessionRecords implements SessionRecords {
  readonly shared = false
  readonly kind = 'lmdb'

  constructor(
    private readonly db: Database<SessionRecord, string>,
    private readonly subs: Database<1, string>
  ) {}

  restore(): KeptSession[] {
    const out: KeptSession[] = []
    for (const { value } of this.db.getRange()) out.push({ rec: value, uris: [] })
    const known = new Set(out.map((k) => k.rec.id))
    // subscriptions whose session was removed by a process that died before removing them
    for (const key of this.subs.getKeys()) if (!known.has(key.slice(0, key.indexOf(' ')))) void this.subs.remove(key)
    // a session's subscriptions are read when it is first used
    return out
  }

  read(id: string): KeptSession | undefined {
    const rec = this.db.get(id)
    if (rec === undefined) return undefined
    const uris: string[] = []
    for (const key of this.subs.getKeys(subRange(id))) uris.push(key.slice(id.length + 1))
    if (rec.subscriptions !== undefined) {
      // a record from before subscriptions had keys of their own: move them out once
      for (const uri of rec.subscriptions) {
        uris.push(uri)
        void this.subs.put(subKey(id, uri), 1)
      }
      delete rec.subscriptions
      void this.db.put(id, rec)
    }
    return { rec, uris }
  }

  async load(id: string): Promise<KeptSession | undefined> {
    return this.read(id)
  }

  async admit(rec: SessionRecord): Promise<Admitted> {
    await this.put(rec)
    return {}
  }

  // not async: a record LMDB cannot encode throws at once, so it is never counted
  put(rec: SessionRecord): Promise<void> {
    return this.db.put(rec.id, rec).then(() => {})
  }

  async remove(id: string): Promise<void> {
    const writes: Promise<unknown>[] = []
    for (const key of this.subs.getKeys(subRange(id))) writes.push(this.subs.remove(key))
    writes.push(this.db.remove(id))
    await Promise.all(writes)
  }

  async subscribe(id: string, uri: string): Promise<void> {
    await this.subs.put(subKey(id, uri), 1)
  }

  async unsubscribe(id: string, uri: string): Promise<void> {
    await this.subs.remove(subKey(id, uri))
  }

  async sweep(): Promise<void> {
    /* this node's sessions are swept by the node, which holds them all */
  }
}
