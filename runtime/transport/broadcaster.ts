import { Frame } from './frame.js'
import type { BroadcasterInfo, ResourceInfo, TransportKind, Reason } from './types.js'
import type { MessageBucket } from './message-rate.js'
import type { AddressSlot } from './address-cap.js'

/** `platform.server.body-limit-bytes` by default: an endpoint sets its own limit on its broadcasters. */
const DEFAULT_FRAME_LIMIT = 1_048_576

/** A counter child prom-client hands out for one label set. */
export interface CounterChild {
  inc(n?: number): void
}

/**
 * A named topic with its members (each a Resource, defined below: the two refer to each other).
 * WebSocket members are subscribers of the uWS topic `topic`, so one `publish`
 * reaches all of them; SSE and long-polling members are written one by one (`direct`).
 */
export class Broadcaster {
  readonly resources = new Map<string, Resource>()
  readonly sockets = new Set<SocketMember>()
  readonly direct = new Set<Resource>()
  readonly topic: string
  readonly createdAt = Date.now()
  destroyed = false
  /** Called after a member left (rooms announce it); not called while destroying. */
  onLeave: ((r: Resource, reason: string) => void) | undefined
  /** Destroyed once its last member leaves (rooms). */
  autoDestroy = false
  /** Its broadcasts reach its members on every node of a cluster (rooms), not only this node's. */
  clustered = false
  /** Largest frame a member may send here: what a frame from another node is held to as well. */
  frameLimit = DEFAULT_FRAME_LIMIT

  constructor(
    readonly id: string,
    readonly className: string,
    readonly counter: CounterChild
  ) {
    this.topic = 'broadcaster:' + id
  }

  info(): BroadcasterInfo {
    return { id: this.id, className: this.className, resourceCount: this.resources.size, isDestroyed: this.destroyed }
  }
}

/** A connected client, identified by a UUID, attached to one broadcaster. */
export abstract class Resource {
  closed = false
  /** Set when the server ends the resource, so the close path reports the right reason. */
  reason: Reason | undefined
  readonly connectedAt = Date.now()
  /** Joined with JoinOptions.silent: endpoints that announce members skip its join and leave. */
  silent = false
  /**
   * The secret by which an SSE or long-polling client proves it is this resource (POST, DELETE,
   * polls); given to that client alone. Undefined for a WebSocket: the socket is the proof.
   */
  token: string | undefined
  /** The principal that joined, when one was resolved. */
  principal: string | undefined
  /** The roles of that principal. */
  roles: readonly string[] | undefined
  /** Message rate of this member, when its endpoint limits it. */
  bucket: MessageBucket | undefined
  /** Its place in its address's connection count, given back when it goes. */
  slot: AddressSlot | undefined

  constructor(
    readonly uuid: string,
    readonly transport: TransportKind,
    readonly broadcaster: Broadcaster
  ) {}

  /** Hands one frame to this resource alone (broadcasts to WebSockets go through the uWS topic). */
  abstract deliver(frame: Frame): void

  /**
   * Hands one JSON frame, as UTF-8 bytes the caller reuses once this returns, to this resource
   * alone: a WebSocket sends the bytes as they are; other transports take the frame's text.
   */
  deliverBytes(bytes: Buffer): void {
    this.deliver(Frame.json(bytes.toString()))
  }

  /** Runs `fn`, whose deliveries go out in one write where the transport can (a corked WebSocket). */
  batch(fn: () => void): void {
    fn()
  }

  /** Ends the connection from the server side, telling the client why where the transport can. */
  abstract end(reason: Reason): void

  /** Waiting for broadcasts. */
  abstract get isSuspended(): boolean

  /**
   * Completes a suspended response so the client comes back (a held long-poll is answered now);
   * false for a transport that has no such response to complete.
   */
  resume(): boolean {
    return false
  }

  /** Between two polls of a long-polling client. */
  get isResumed(): boolean {
    return false
  }

  info(): ResourceInfo {
    return {
      uuid: this.uuid,
      transport: this.transport,
      isSuspended: this.isSuspended,
      isResumed: this.isResumed,
      broadcaster: this.broadcaster.id
    }
  }
}

/** A WebSocket member, reached through the uWS topic; the backpressure sweep reads its socket. */
export interface SocketMember extends Resource {
  readonly ws: { getBufferedAmount(): number }
}
