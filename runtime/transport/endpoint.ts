import { randomUUID } from 'node:crypto'
import type { HttpResponse, HttpRequest, us_socket_context_t, WebSocket } from 'uWebSockets.js'
import { parseJsonBody, requestHeaders, statusLine, type Context } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import type { Broadcaster, Resource } from './broadcaster.js'
import { RESOURCE_HEADER, TOKEN_HEADER, memberOf, newToken } from './member-credentials.js'
import { Frame } from './frame.js'
import { WsResource, type WsData } from './ws-resource.js'
import { SseResource } from './sse-resource.js'
import { LongPollingResource } from './long-polling-resource.js'
import { Reason, type JoinOptions, type TransportKind } from './types.js'
import { MessageBucket } from './message-rate.js'
import type { EndpointHooks, EndpointRequest } from './endpoint-hooks.js'
import type { EndpointSettings } from './endpoint-settings.js'
import { HTTP_ERRORS } from '../http/index.js'
import { TRANSPORT_ERRORS } from './errors.js'
import type { AddressSlot } from './address-cap.js'

/** How a 429 names each transport. */
const KIND: Record<TransportKind, string> = { WEBSOCKET: 'WebSocket', SSE: 'SSE', LONG_POLLING: 'long-polling' }

/**
 * One path served on all three transports: a WebSocket upgrade, `GET` as SSE (default) or
 * long-polling (`?transport=long-polling`, then `&uuid=`), `DELETE` to leave, and `POST` to speak
 * when the hooks take messages. Resources join the broadcaster `hooks.resolve` names.
 */
export class Endpoint {
  private readonly paramNames: string[] = []
  private readonly prepared = new WeakSet<Broadcaster>()
  /** Largest frame or POST body of this endpoint. */
  private readonly frameLimit: number

  constructor(
    private readonly o: EndpointSettings,
    readonly pattern: string,
    private readonly hooks: EndpointHooks
  ) {
    pattern.replace(/\{([^}]+)\}/g, (_, n: string) => {
      this.paramNames.push(n)
      return ''
    })
    this.frameLimit = Math.min(o.frameLimit, hooks.maxMessageBytes ?? Infinity)
  }

  install(): void {
    const { http } = this.o
    this.o.transport.handlers.push({ path: this.pattern, className: this.hooks.className ?? 'Broadcaster' })
    http.ws<WsData>(this.pattern, {
      // frames up to twice the limit are read and refused with 1009; beyond that uWS drops the connection
      maxPayloadLength: this.frameLimit * 2,
      // uWS stops buffering at twice our limit; we close at the limit (see Transport)
      maxBackpressure: this.o.maxBackpressureBytes * 2,
      closeOnBackpressureLimit: 0,
      idleTimeout: this.o.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      // an exception escaping a uWS callback would take the process down: log it instead
      upgrade: (res, req, context) => {
        try {
          this.upgrade(res, req, context)
        } catch (err) {
          this.failed(err, 'upgrade')
          // uWS also aborts if an upgrade handler returns without answering
          try {
            res.cork(() => {
              res
                .writeStatus('500 Internal Server Error')
                .end(JSON.stringify(new PlatformError(HTTP_ERRORS.INTERNAL).body()), true)
            })
          } catch {
            /* already answered */
          }
        }
      },
      open: (ws) => {
        try {
          this.openWs(ws)
        } catch (err) {
          this.failed(err, 'open')
        }
      },
      message: (ws, msg) => {
        try {
          this.wsMessage(ws, msg)
        } catch (err) {
          this.failed(err, 'message')
        }
      },
      close: (ws, code, msg) => {
        try {
          this.closeWs(ws, code, msg)
        } catch (err) {
          this.failed(err, 'close')
        }
      }
    })
    // a web page can reach every method here: each applies the browser-origin rule
    http.get(this.pattern, (ctx) => this.get(ctx), { checkOrigin: true })
    if (this.hooks.message !== undefined)
      http.post(this.pattern, (ctx) => this.post(ctx), {
        body: this.hooks.rawText === true ? 'raw' : 'json',
        bodyLimit: this.frameLimit,
        checkOrigin: true
      })
    http.delete(
      this.pattern,
      (ctx) => {
        this.leave(ctx)
      },
      { checkOrigin: true }
    )
  }

  private failed(err: unknown, phase: string): void {
    this.o.logger.error({ err, phase, endpoint: this.pattern }, 'transport WebSocket handler failed')
  }

  private broadcaster(id: string): Broadcaster {
    const b = this.o.transport.broadcaster(id, this.hooks.className)
    if (!this.prepared.has(b)) {
      this.prepared.add(b)
      b.frameLimit = this.frameLimit
      this.hooks.setup?.(b)
    }
    return b
  }

  private join(r: Resource, opts: JoinOptions | undefined): void {
    if (opts?.silent === true) r.silent = true
    r.principal = opts?.principal
    r.roles = opts?.roles
    const rate = this.hooks.messageRate
    if (rate !== undefined && rate.perSecond > 0) r.bucket = new MessageBucket(rate)
    this.o.transport.add(r)
    this.hooks.joined?.(r)
  }

  private resolveCtx(ctx: Context): string {
    return this.hooks.resolve({ params: ctx.params, query: ctx.query, headers: ctx.headers })
  }

  private joinOptionsCtx(ctx: Context, transport: TransportKind): JoinOptions | undefined {
    return this.hooks.joinOptions?.({ params: ctx.params, query: ctx.query, headers: ctx.headers, transport })
  }

  // --- WebSocket ---

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const key = req.getHeader('sec-websocket-key')
    const protocol = req.getHeader('sec-websocket-protocol')
    const extensions = req.getHeader('sec-websocket-extensions')
    const headers = requestHeaders(req)
    const params: Record<string, string> = {}
    for (let i = 0; i < this.paramNames.length; i++) {
      const raw = req.getParameter(i) ?? ''
      try {
        params[this.paramNames[i]!] = decodeURIComponent(raw)
      } catch {
        params[this.paramNames[i]!] = raw
      }
    }
    let id = ''
    let opts: JoinOptions | undefined
    let slot: AddressSlot | undefined
    let err: PlatformError | undefined
    if (this.o.transport.closing) {
      err = new PlatformError(HTTP_ERRORS.SHUTTING_DOWN)
    } else {
      err = this.o.http.originRefusal(headers, req.getUrl())
    }
    if (err === undefined) {
      try {
        const er: EndpointRequest = {
          params,
          query: new URLSearchParams(req.getQuery() ?? ''),
          headers,
          transport: 'WEBSOCKET'
        }
        id = this.hooks.resolve(er)
        opts = this.hooks.joinOptions?.(er)
        // taken before upgrading, so a refused socket never exists; the resource gives it back
        slot = this.takeUpgradeSlot(res, headers)
      } catch (e) {
        if (!isWireError(e)) throw e
        err = e
      }
    }
    if (err !== undefined) {
      const e = err
      res.cork(() => {
        res
          .writeStatus(statusLine(e.status))
          .writeHeader('content-type', 'application/json')
          .end(JSON.stringify(e.body()), true)
      })
      return
    }
    try {
      res.upgrade<WsData>({ id, opts, slot, resource: undefined }, key, protocol, extensions, context)
    } catch (e) {
      slot?.release()
      throw e
    }
  }

  /**
   * The upgrade's place in its address's count. Without trusted proxies the address is the peer's,
   * and reading it is a system call the cap mostly does without: it reads it from the response
   * now, or from the socket later (`openWs` hands the slot over; uWS opens it within `res.upgrade`).
   * Behind a trusted proxy the peer is read anyway, to know whether to believe its header.
   */
  private takeUpgradeSlot(res: HttpResponse, headers: Record<string, string | undefined>): AddressSlot | undefined {
    const cap = this.hooks.addressCap
    if (cap === undefined) return undefined
    const http = this.o.http
    if (http.proxies.configured) return cap.take(http.upgradeAddress(res, headers), KIND.WEBSOCKET)
    return cap.takeDeferred(res, KIND.WEBSOCKET)
  }

  private openWs(ws: WebSocket<WsData>): void {
    const data = ws.getUserData()
    // the upgrade's response is gone: an unread address is read from the socket, readable until its close
    // handler, which releases the slot
    data.slot?.readFrom(ws)
    const r = new WsResource(randomUUID(), this.broadcaster(data.id), ws, this.o.transport)
    r.slot = data.slot
    data.resource = r
    this.join(r, data.opts)
  }

  private wsMessage(ws: WebSocket<WsData>, msg: ArrayBuffer): void {
    const r = ws.getUserData().resource
    if (r === undefined || r.closed) return
    if (msg.byteLength > this.frameLimit) {
      this.o.logger.warn(
        { uuid: r.uuid, bytes: msg.byteLength, limit: this.frameLimit },
        'closing WebSocket: frame over the limit (1009)'
      )
      this.o.transport.end(r, Reason.tooBig)
      return
    }
    if (r.bucket !== undefined && !r.bucket.take()) {
      this.o.logger.warn(
        { uuid: r.uuid, broadcaster: r.broadcaster.id, ...this.hooks.messageRate },
        'closing WebSocket: over its message rate (1008)'
      )
      this.o.transport.end(r, Reason.rateLimited)
      return
    }
    if (this.hooks.message === undefined) return
    if (this.hooks.rawText === true) {
      // the ArrayBuffer is only valid during this callback: decode synchronously
      const text = utf8(msg)
      if (text === undefined) {
        // a binary frame that is not UTF-8 would reach the model as replacement characters
        this.o.logger.warn({ uuid: r.uuid }, 'closing WebSocket: a frame that is not UTF-8 text (1007)')
        this.o.transport.end(r, Reason.invalid)
        return
      }
      this.hooks.message(r, text)
      return
    }
    let value: unknown
    try {
      // the ArrayBuffer is only valid during this callback: parse synchronously
      value = parseJsonBody(Buffer.from(msg), this.o.jsonMaxDepth)
    } catch (err) {
      const body = isWireError(err) ? err.body() : { error: 'Invalid frame' }
      r.deliver(Frame.json(JSON.stringify({ type: 'error', ...body })))
      return
    }
    this.hooks.message(r, value)
  }

  private closeWs(ws: WebSocket<WsData>, code: number, msg: ArrayBuffer): void {
    const data = ws.getUserData()
    const r = data.resource
    if (r === undefined) {
      // opening failed before a resource held the slot: nothing else gives it back
      data.slot?.release()
      return
    }
    let reason = r.reason
    if (reason === undefined) {
      const text = Buffer.from(msg).toString()
      if (text.includes('too big')) {
        reason = Reason.tooBig
        this.o.logger.warn(
          { uuid: r.uuid, limit: this.frameLimit * 2 },
          'WebSocket dropped: frame beyond twice the limit'
        )
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

  private get(ctx: Context): Promise<void> | undefined {
    const id = this.resolveCtx(ctx)
    const mode = ctx.query.get('transport') ?? ctx.headers['x-platform-transport'] ?? 'sse'
    if (mode === 'long-polling') return this.poll(ctx, id)
    if (mode !== 'sse')
      throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, {
        name: 'transport',
        detail: "use 'sse' or 'long-polling' (or a WebSocket upgrade)"
      })
    if (this.o.transport.closing) throw new PlatformError(HTTP_ERRORS.SHUTTING_DOWN)
    const opts = this.joinOptionsCtx(ctx, 'SSE')
    const slot = this.hooks.addressCap?.take(ctx.address(), KIND.SSE)
    // the member's uuid and token also as headers, for clients that read them before any event
    const uuid = randomUUID()
    const token = newToken()
    ctx.setHeader(RESOURCE_HEADER, uuid).setHeader(TOKEN_HEADER, token)
    const stream = ctx.sse({ maxQueuedBytes: this.o.maxBackpressureBytes })
    const r = new SseResource(uuid, this.broadcaster(id), stream)
    r.token = token
    r.slot = slot
    stream.onClose(() => {
      // the stream closes itself when its queue overflows (the HTTP core counts that slow consumer)
      const reason = r.reason ?? (stream.slow ? Reason.slow : Reason.closed)
      if (reason === Reason.slow)
        this.o.logger.warn(
          { uuid: r.uuid, broadcaster: r.broadcaster.id, limit: this.o.maxBackpressureBytes },
          'closed slow SSE consumer'
        )
      this.o.transport.remove(r, reason)
    })
    this.join(r, opts)
    return undefined
  }

  private poll(ctx: Context, id: string): Promise<void> | undefined {
    const t = this.o.transport
    const uuid = ctx.query.get('uuid') ?? ctx.headers[RESOURCE_HEADER]
    if (uuid === undefined || uuid === '') {
      if (t.closing) throw new PlatformError(HTTP_ERRORS.SHUTTING_DOWN)
      const opts = this.joinOptionsCtx(ctx, 'LONG_POLLING')
      const slot = this.hooks.addressCap?.take(ctx.address(), KIND.LONG_POLLING)
      const r = new LongPollingResource(
        randomUUID(),
        this.broadcaster(id),
        t,
        this.o.longPollingQueue,
        this.o.maxBackpressureBytes
      )
      r.token = newToken()
      r.slot = slot
      this.join(r, opts)
      r.reply(ctx, true)
      return undefined
    }
    const r = memberOf(this.o.transport, ctx, id)
    if (!(r instanceof LongPollingResource)) throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_RESOURCE, { uuid })
    return r.open(ctx, Date.now() + this.o.longPollingTimeoutMs)
  }

  private post(ctx: Context): unknown {
    const body = this.hooks.rawText === true ? rawTextBody(ctx) : ctx.body
    if (this.hooks.detachedPost !== undefined && (ctx.headers[RESOURCE_HEADER] ?? ctx.query.get('uuid') ?? '') === '')
      return this.hooks.detachedPost(ctx, body)
    const r = memberOf(this.o.transport, ctx, this.resolveCtx(ctx))
    if (r instanceof LongPollingResource) r.lastSeen = Date.now()
    if (r.bucket !== undefined && !r.bucket.take()) {
      ctx.setHeader('retry-after', String(r.bucket.retryAfterSeconds()))
      throw new PlatformError(TRANSPORT_ERRORS.RATE_LIMITED, { ...this.hooks.messageRate })
    }
    return { status: 'sent', resourceCount: this.hooks.message!(r, body) }
  }

  private leave(ctx: Context): void {
    const r = memberOf(this.o.transport, ctx, this.resolveCtx(ctx))
    this.o.transport.end(r, Reason.left)
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** The bytes as UTF-8 text, or undefined when they are not UTF-8. */
function utf8(bytes: ArrayBuffer | Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}

function rawTextBody(ctx: Context): string {
  if (ctx.rawBody === undefined) return ''
  const text = utf8(ctx.rawBody)
  if (text === undefined) throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: 'the body is not UTF-8 text' })
  return text
}
