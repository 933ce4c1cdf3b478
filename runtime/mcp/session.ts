import type { SessionRecord } from './session-records.js'
import type { StreamHistory } from './stream-history.js'
import type { JsonObject } from './wire.js'

/** A live session: the record plus what only exists in this process (GET stream, pending requests). */
export class Session {
  /** Notification channel: the GET SSE stream or the WebSocket the session was opened on. */
  channel: ((msg: JsonObject) => boolean) | undefined
  /** Ends the channel's stream (GET SSE) when the session ends. */
  closeChannel: (() => void) | undefined
  /** The GET stream's events for Last-Event-ID replay; set by the first GET, in memory only. */
  history: StreamHistory | undefined
  /** Sessions kept in a shared store: a notification with no channel here goes to the node holding one. */
  relay: ((msg: JsonObject) => void) | undefined
  readonly pending = new Map<string | number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  /**
   * Ends the ids of this node's server requests (`@<node>` with a store several nodes share): an
   * answer reaching another node names the node waiting for it, and two nodes' ids never meet.
   */
  requestSuffix = ''
  /** Requests in flight, by JSON-RPC id, so notifications/cancelled can abort them. */
  readonly inflight = new Map<string | number, () => void>()
  /** Subscribed resource URIs (written one entry each through SessionStore.subscribe). */
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
    return `s-${this.nextId++}${this.requestSuffix}`
  }
  /** The client's answer to a server request of this node: true when one was waiting for it. */
  answer(id: string | number, msg: { result?: unknown; error?: unknown }): boolean {
    const p = this.pending.get(id)
    if (p === undefined) return false
    this.pending.delete(id)
    const e = msg.error
    if (e !== undefined)
      p.reject(
        new Error(
          typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string'
            ? (e as { message: string }).message
            : 'client error'
        )
      )
    else p.resolve(msg.result)
    return true
  }
  /**
   * A notification: on the open channel, or kept for the GET stream's replay while none is open
   * here and sent to the other nodes, one of which may hold the session's GET stream.
   */
  notify(msg: JsonObject): void {
    if (this.channel !== undefined) this.channel(msg)
    else {
      this.history?.record(msg)
      this.relay?.(msg)
    }
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
