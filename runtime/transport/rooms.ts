import { randomUUID } from 'node:crypto'
import type { HttpResponse, HttpRequest, us_socket_context_t, WebSocket } from 'uWebSockets.js'
import { PlatformError, parseJsonBody, statusLine, type Context, type HttpServer } from '../http/index.js'
import type { Logger } from '../observability/index.js'
import type { Broadcaster } from './broadcaster.js'
import { Frame } from './frame.js'
import type { Resource } from './resource.js'
import { WsResource, type WsData } from './ws-resource.js'
import { SseResource } from './sse-resource.js'
import { LongPollingResource } from './long-polling-resource.js'
import type { Transport } from './transport.js'
import { Reason } from './types.js'

export const ROOM_PATH = '/platform/rooms/{room}'
const ROOM_NAME = /^[A-Za-z0-9_\-.:]{1,128}$/
const SENDER_HEADER = 'x-platform-resource'

export interface RoomOptions {
  http: HttpServer
  transport: Transport
  logger: Logger
  /** Largest frame a member may send (platform.server.body-limit-bytes). */
  frameLimit: number
  jsonMaxDepth: number
  /** uWS idleTimeout in seconds; pings go out at about half of it. */
  idleTimeoutSeconds: number
  maxBackpressureBytes: number
  longPollingTimeoutMs: number
  longPollingQueue: number
}

/** The broadcaster id of a room. */
export function roomBroadcasterId (room: string): string { return '/platform/rooms/' + room }

/**
 * `/platform/rooms/{room}` on WebSocket, SSE and long-polling. Wire format (docs/transport.md):
 * the joiner gets `joined`, the others `member-joined`; a member's frame reaches every member as
 * `message`; a member's departure reaches the rest as `member-left`; a bad frame earns its sender
 * an `error` frame and nothing else.
 */
export class Rooms {
  constructor (private readonly o: RoomOptions) {}

  install (): void {
    const { http } = this.o
    http.ws<WsData>(ROOM_PATH, {
      // frames up to twice the limit are read and refused with 1009; beyond that uWS drops the connection
      maxPayloadLength: this.o.frameLimit * 2,
      maxBackpressure: this.o.maxBackpressureBytes * 2,
      closeOnBackpressureLimit: 0,
      idleTimeout: this.o.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => { this.upgrade(res, req, context) },
      open: (ws) => { this.openWs(ws) },
      message: (ws, msg) => { this.wsMessage(ws, msg) },
      close: (ws, code, msg) => { this.closeWs(ws, code, msg) }
    })
    http.get(ROOM_PATH, (ctx) => this.get(ctx))
    http.post(ROOM_PATH, (ctx) => this.post(ctx), { body: 'json' })
    http.delete(ROOM_PATH, (ctx) => { this.leave(ctx) })
  }

  // --- shared ---

  private room (name: string): Broadcaster {
    const b = this.o.transport.broadcaster(roomBroadcasterId(name), 'RoomBroadcaster')
    if (b.onLeave === undefined) {
      b.autoDestroy = true
      b.onLeave = (r, reason) => {
        this.o.transport.publish(b, Frame.json(JSON.stringify({ type: 'member-left', room: name, uuid: r.uuid, reason })))
      }
    }
    return b
  }

  /** Registers a new member: it gets `joined` (with who is there), everyone else `member-joined`. */
  private join (name: string, r: Resource): void {
    const t = this.o.transport
    const b = r.broadcaster
    t.add(r)
    const members: string[] = []
    for (const m of b.resources.values()) members.push(m.uuid)
    r.deliver(Frame.json(JSON.stringify({ type: 'joined', room: name, uuid: r.uuid, transport: r.transport, members })))
    t.publish(b, Frame.json(JSON.stringify({ type: 'member-joined', room: name, uuid: r.uuid, transport: r.transport })), r)
  }

  /** Broadcasts one member's frame to every member, the sender included. */
  private say (name: string, r: Resource, data: unknown): number {
    return this.o.transport.publish(r.broadcaster, Frame.json(JSON.stringify({ type: 'message', room: name, from: r.uuid, data })))
  }

  private member (ctx: Context, name: string): Resource {
    const uuid = ctx.headers[SENDER_HEADER] ?? ctx.query.get('uuid') ?? ''
    if (uuid === '') throw new PlatformError('MISSING_RESOURCE_ID')
    const r = this.o.transport.resource(uuid)
    if (r === undefined || r.broadcaster.id !== roomBroadcasterId(name)) throw new PlatformError('UNKNOWN_RESOURCE', { uuid })
    return r
  }

  // --- WebSocket ---

  private upgrade (res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const key = req.getHeader('sec-websocket-key')
    const protocol = req.getHeader('sec-websocket-protocol')
    const extensions = req.getHeader('sec-websocket-extensions')
    let name = req.getParameter(0) ?? ''
    try { name = decodeURIComponent(name) } catch { /* validated below */ }
    let err: PlatformError | undefined
    if (this.o.transport.closing) err = new PlatformError('SHUTTING_DOWN')
    else if (!ROOM_NAME.test(name)) err = new PlatformError('INVALID_ROOM', { room: name.slice(0, 200) })
    if (err !== undefined) {
      const e = err
      res.cork(() => {
        res.writeStatus(statusLine(e.status)).writeHeader('content-type', 'application/json').end(JSON.stringify(e.body()), true)
      })
      return
    }
    res.upgrade<WsData>({ room: name, resource: undefined }, key, protocol, extensions, context)
  }

  private openWs (ws: WebSocket<WsData>): void {
    const data = ws.getUserData()
    const r = new WsResource(randomUUID(), this.room(data.room), ws, this.o.transport)
    data.resource = r
    this.join(data.room, r)
  }

  private wsMessage (ws: WebSocket<WsData>, msg: ArrayBuffer): void {
    const data = ws.getUserData()
    const r = data.resource
    if (r === undefined || r.closed) return
    if (msg.byteLength > this.o.frameLimit) {
      this.o.logger.warn({ uuid: r.uuid, bytes: msg.byteLength, limit: this.o.frameLimit }, 'closing WebSocket: frame over the limit (1009)')
      this.o.transport.end(r, Reason.tooBig)
      return
    }
    let value: unknown
    try {
      // the ArrayBuffer is only valid during this callback: parse synchronously
      value = parseJsonBody(Buffer.from(msg), this.o.jsonMaxDepth)
    } catch (err) {
      const body = err instanceof PlatformError ? err.body() : { error: 'Invalid frame' }
      r.deliver(Frame.json(JSON.stringify({ type: 'error', ...body })))
      return
    }
    this.say(data.room, r, value)
  }

  private closeWs (ws: WebSocket<WsData>, code: number, msg: ArrayBuffer): void {
    const r = ws.getUserData().resource
    if (r === undefined) return
    let reason = r.reason
    if (reason === undefined) {
      const text = Buffer.from(msg).toString()
      if (text.includes('too big')) {
        reason = Reason.tooBig
        this.o.logger.warn({ uuid: r.uuid, limit: this.o.frameLimit * 2 }, 'WebSocket dropped: frame beyond twice the limit')
      } else if (text.includes('inactivity')) {
        reason = Reason.timeout
      } else if (text !== '' && code === 1006) {
        // uWS drops a peer that breaks the protocol (e.g. a text frame that is not UTF-8)
        reason = Reason.invalid
        this.o.logger.warn({ uuid: r.uuid, detail: text }, 'WebSocket dropped: invalid frame')
      } else {
        reason = Reason.closed
      }
    }
    this.o.transport.remove(r, reason)
  }

  // --- SSE and long-polling ---

  private get (ctx: Context): Promise<void> | undefined {
    const name = this.validName(ctx)
    const mode = ctx.query.get('transport') ?? ctx.headers['x-platform-transport'] ?? 'sse'
    if (mode === 'long-polling') return this.poll(ctx, name)
    if (mode !== 'sse') throw new PlatformError('INVALID_QUERY', { name: 'transport', detail: "use 'sse' or 'long-polling' (or a WebSocket upgrade)" })
    if (this.o.transport.closing) throw new PlatformError('SHUTTING_DOWN')
    const stream = ctx.sse({ maxQueuedBytes: this.o.maxBackpressureBytes })
    const r = new SseResource(randomUUID(), this.room(name), stream)
    stream.onClose(() => {
      // the stream closes itself when its queue overflows: that is a slow consumer
      const reason = r.reason ?? (ctx.aborted ? Reason.closed : Reason.slow)
      if (reason === Reason.slow) this.o.logger.warn({ uuid: r.uuid, broadcaster: r.broadcaster.id, limit: this.o.maxBackpressureBytes }, 'closed slow SSE consumer')
      this.o.transport.remove(r, reason)
    })
    this.join(name, r)
    return undefined
  }

  private poll (ctx: Context, name: string): Promise<void> | undefined {
    const t = this.o.transport
    const uuid = ctx.query.get('uuid') ?? ctx.headers[SENDER_HEADER]
    if (uuid === undefined || uuid === '') {
      if (t.closing) throw new PlatformError('SHUTTING_DOWN')
      const r = new LongPollingResource(randomUUID(), this.room(name), t, this.o.longPollingQueue)
      this.join(name, r)
      r.reply(ctx)
      return undefined
    }
    const r = this.member(ctx, name)
    if (!(r instanceof LongPollingResource)) throw new PlatformError('UNKNOWN_RESOURCE', { uuid })
    return r.open(ctx, Date.now() + this.o.longPollingTimeoutMs)
  }

  private post (ctx: Context): unknown {
    const name = this.validName(ctx)
    const r = this.member(ctx, name)
    if (r instanceof LongPollingResource) r.lastSeen = Date.now()
    return { status: 'sent', resourceCount: this.say(name, r, ctx.body) }
  }

  private leave (ctx: Context): void {
    const name = this.validName(ctx)
    const r = this.member(ctx, name)
    this.o.transport.end(r, Reason.left)
  }

  private validName (ctx: Context): string {
    const name = ctx.params.room ?? ''
    if (!ROOM_NAME.test(name)) throw new PlatformError('INVALID_ROOM', { room: name.slice(0, 200) })
    return name
  }
}
