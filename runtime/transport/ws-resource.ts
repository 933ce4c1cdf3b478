import type { WebSocket } from 'uWebSockets.js'
import { Resource, type Broadcaster } from './broadcaster.js'
import type { Frame } from './frame.js'
import { Reason, type JoinOptions } from './types.js'
import type { AddressSlot } from './address-cap.js'

/** What a WebSocket carries from upgrade to close. */
export interface WsData {
  /** The broadcaster the socket joins once open. */
  id: string
  /** The join options of the upgrade request. */
  opts: JoinOptions | undefined
  /** The upgrade's place in its address's count, handed to the resource on open. */
  slot: AddressSlot | undefined
  resource: WsResource | undefined
}

/** Close code and reason per server-side cause (RFC 6455 §7.4.1). */
const CLOSE: Record<Reason, [number, string]> = {
  [Reason.closed]: [1000, 'closed'],
  [Reason.disconnected]: [1000, 'disconnected'],
  [Reason.left]: [1000, 'left'],
  [Reason.slow]: [1008, 'slow consumer'],
  [Reason.timeout]: [1001, 'timeout'],
  [Reason.tooBig]: [1009, 'message too big'],
  [Reason.rateLimited]: [1008, 'rate limit exceeded'],
  [Reason.invalid]: [1007, 'invalid frame'],
  [Reason.queueOverflow]: [1008, 'queue overflow'],
  [Reason.shutdown]: [1001, 'server shutting down'],
  [Reason.destroyed]: [1000, 'broadcaster destroyed'],
  // an application code (4000-4999): the HTTP 404 of a socket
  [Reason.notFound]: [4404, 'not found']
}

/** Told when a direct send left bytes buffered, so slow consumers are found without polling. */
export interface SocketWatcher {
  sent(r: WsResource, status: number): void
}

export class WsResource extends Resource {
  constructor(
    uuid: string,
    broadcaster: Broadcaster,
    readonly ws: WebSocket<WsData>,
    private readonly watcher: SocketWatcher
  ) {
    super(uuid, 'WEBSOCKET', broadcaster)
  }

  deliver(frame: Frame): void {
    this.send(frame.text)
  }

  // uWS copies what it sends (or buffers) before returning
  override deliverBytes(bytes: Buffer): void {
    this.send(bytes)
  }

  private send(message: string | Buffer): void {
    if (this.closed) return
    const status = this.ws.send(message, false)
    // 1 = written; 0 = buffered; 2 = dropped at the uWS cap
    if (status !== 1) this.watcher.sent(this, status)
  }

  override batch(fn: () => void): void {
    if (!this.closed) this.ws.cork(fn)
  }

  end(reason: Reason): void {
    if (this.closed) return
    this.reason = reason
    const [code, text] = CLOSE[reason]
    // uWS calls the close handler synchronously, which unregisters this resource
    this.ws.end(code, text)
  }

  get isSuspended(): boolean {
    return true
  }
}
