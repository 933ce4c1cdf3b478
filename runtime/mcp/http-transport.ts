import type { Platform } from '../platform.js'
import type { Context, SseStream } from '../http/index.js'
import { clientAddress, parseJsonBody } from '../http/index.js'
import { Cancellation } from '../plugins/index.js'
import type { McpCore } from './core.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { ErrorCode, rpcError, MCP_ERRORS, rpcFailure, isRpcFailure, rpcErrorMember } from './errors.js'
import type { OriginPolicy } from '../http/index.js'
import { callerOf } from './session-quota.js'
import type { Session } from './sessions.js'
import { StreamHistory } from './stream-history.js'
import type { CallContext, EndpointRef, JsonObject, Sink } from './types.js'

const JSON_TYPE = 'application/json'

/** Writes one JSON-RPC error with its status (transport-level rejections carry id null). */
function sendError(
  ctx: Context,
  status: number,
  code: number,
  message: string,
  id: unknown = null,
  data?: unknown
): void {
  ctx.send(
    status,
    JSON.stringify(rpcError(id, data === undefined ? { code, message } : { code, message, data })),
    JSON_TYPE
  )
}

/**
 * An MCP client reads JSON-RPC, so an over-limit body is refused in JSON-RPC too
 * (id null: the request was never read).
 */
function tooLargeBody(limit: number): { body: string; contentType: string } {
  const message = `Request body too large: the limit is ${limit} bytes (platform.mcp.body-limit-bytes, else platform.server.body-limit-bytes)`
  return {
    body: JSON.stringify(rpcError(null, { code: ErrorCode.InvalidRequest, message, data: { limitBytes: limit } })),
    contentType: JSON_TYPE
  }
}

/**
 * The sink of one POST: notifications and server requests switch the response to an SSE stream
 * (only if the client accepts one); otherwise the response is one JSON object. The stream belongs
 * to this request alone, so a reply can never reach another client (CVE-2026-25536).
 */
class PostSink implements Sink {
  stream: SseStream | undefined
  readonly canStream: boolean
  request: Sink['request']

  constructor(
    private readonly ctx: Context,
    wantsSse: boolean,
    private readonly cctx: () => CallContext
  ) {
    this.canStream = wantsSse
    if (wantsSse) this.request = async (method, params) => await this.serverRequest(method, params)
  }

  notify(msg: JsonObject): void {
    if (!this.canStream || this.ctx.aborted) return
    this.open().send({ event: 'message', data: JSON.stringify(msg) })
  }

  open(): SseStream {
    if (this.stream === undefined) {
      const s = this.cctx().session
      this.stream = this.ctx.sse(s !== undefined ? { headers: { 'mcp-session-id': s.id } } : {})
      // a stream the server ends (shutdown, slow consumer) cancels the request, like a client leaving
      this.stream.onClose(() => {
        this.cctx().cancel?.()
      })
    }
    return this.stream
  }

  private async serverRequest(method: string, params: unknown): Promise<unknown> {
    const s = this.cctx().session
    if (s === undefined)
      throw new PlatformError(MCP_ERRORS.MCP_INTERNAL_ERROR, { detail: 'Server requests need a session' })
    const id = s.newRequestId()
    return await new Promise((resolve, reject) => {
      s.pending.set(id, { resolve, reject })
      this.notify({ jsonrpc: '2.0', id, method, params })
      this.ctx.onAbort(() => {
        if (s.pending.delete(id)) reject(new Error('client went away'))
      })
    })
  }
}

/** POST, GET and DELETE of the MCP endpoints (MCP Streamable HTTP, both dialects on one path). */
export class HttpTransport {
  constructor(
    private readonly platform: Platform,
    private readonly core: McpCore,
    private readonly origins: OriginPolicy
  ) {}

  /** Registers the endpoint's routes; `resolve` maps a request to its endpoint or undefined (404). */
  mount(pattern: string, resolve: (ctx: Context) => EndpointRef | undefined, bodyLimit: number | undefined): void {
    const opts = {
      body: 'raw' as const,
      optionalBody: true,
      tooLarge: tooLargeBody,
      ...(bodyLimit !== undefined ? { bodyLimit } : {})
    }
    const http = this.platform.http
    http.route(
      'POST',
      pattern,
      async (ctx) => {
        await this.guarded(ctx, resolve, async (ep) => {
          await this.post(ctx, ep)
        })
      },
      opts
    )
    http.route('GET', pattern, async (ctx) => {
      await this.guarded(ctx, resolve, async (ep) => {
        this.get(ctx, ep)
      })
    })
    http.route(
      'DELETE',
      pattern,
      async (ctx) => {
        await this.guarded(ctx, resolve, async (ep) => {
          this.delete(ctx, ep)
        })
      },
      opts
    )
    http.route(['PUT', 'PATCH'], pattern, (ctx) => {
      ctx.setHeader('allow', 'GET, POST, DELETE, OPTIONS')
      sendError(ctx, 405, ErrorCode.ServerError, 'Method not allowed.')
    })
  }

  private async guarded(
    ctx: Context,
    resolve: (ctx: Context) => EndpointRef | undefined,
    run: (ep: EndpointRef) => Promise<void>
  ): Promise<void> {
    if (!this.origins.allowed(ctx.headers.origin, ctx.headers.host)) {
      sendError(ctx, 403, -32600, 'Forbidden Origin')
      return
    }
    const ep = resolve(ctx)
    if (ep === undefined) {
      sendError(ctx, 404, -32600, `No MCP endpoint at ${ctx.path}`)
      return
    }
    try {
      if (this.core.httpGuards.length > 0) for (const g of this.core.httpGuards) if (!(await g(ctx, ep))) return
      // a session kept in a store shared by the nodes, opened on another node: read before it is used
      const sid = ctx.headers['mcp-session-id']
      const fetched = sid === undefined || sid === '' ? undefined : this.core.sessions.fetch(sid)
      if (fetched !== undefined && !(await this.reached(ctx, fetched))) return
      await run(ep)
    } catch (err) {
      this.platform.logger.error({ err, path: ctx.path }, 'MCP request failed')
      if (!ctx.done) sendError(ctx, 500, ErrorCode.InternalError, 'Internal error')
    }
  }

  /** False (and a 503 answered) when the session store cannot be reached. */
  private async reached(ctx: Context, p: Promise<void>): Promise<boolean> {
    try {
      await p
      return true
    } catch (err) {
      if (!isPlatformError(err, MCP_ERRORS.MCP_STORE_UNAVAILABLE)) throw err
      if (!ctx.done) sendError(ctx, 503, ErrorCode.InternalError, err.message)
      return false
    }
  }

  private async post(ctx: Context, ep: EndpointRef): Promise<void> {
    const h = ctx.headers
    const ct = h['content-type']
    if (ct === undefined || !ct.toLowerCase().includes(JSON_TYPE)) {
      sendError(ctx, 415, ErrorCode.ServerError, 'Unsupported Media Type: Content-Type must be application/json')
      return
    }
    const accept = (h.accept ?? '').toLowerCase()
    const wantsSse = accept.includes('text/event-stream')
    if (accept !== '' && !wantsSse && !accept.includes(JSON_TYPE) && !accept.includes('*/*')) {
      sendError(
        ctx,
        406,
        ErrorCode.ServerError,
        'Not Acceptable: Client must accept application/json or text/event-stream'
      )
      return
    }
    const raw = ctx.rawBody
    if (raw === undefined || raw.length === 0) {
      sendError(ctx, 400, ErrorCode.ParseError, 'Parse error: Empty body')
      return
    }
    let msg: unknown
    try {
      msg = parseJsonBody(raw, this.platform.config.get('platform.server.json-max-depth'))
    } catch (err) {
      sendError(ctx, 400, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`)
      return
    }
    const id = msg !== null && typeof msg === 'object' && !Array.isArray(msg) ? (msg as JsonObject).id : undefined
    const cancel = new Cancellation()
    const abort = (): void => {
      cancel.abort()
    }
    ctx.onAbort(abort)
    const caller = this.platform.principals.resolve(ctx)
    const cctx: CallContext = {
      endpoint: ep,
      transport: 'http',
      headers: h,
      principal: caller?.name ?? null,
      caller,
      ...clientAddress(ctx),
      sink: undefined as unknown as Sink,
      signal: cancel,
      cancel: abort
    }
    const sink = new PostSink(ctx, wantsSse, () => cctx)
    cctx.sink = sink
    let out
    try {
      out = await this.core.handle(msg, cctx)
    } catch (err) {
      const e = rpcFailure(err)
      if (!isRpcFailure(err)) this.platform.logger.error({ err }, 'MCP dispatch failed')
      const body = rpcError(typeof id === 'string' || typeof id === 'number' ? id : null, rpcErrorMember(e))
      if (sink.stream !== undefined) {
        sink.stream.send({ event: 'message', data: JSON.stringify(body) })
        sink.stream.close()
        return
      }
      if (e.headers !== undefined) for (const [k, v] of Object.entries(e.headers)) ctx.setHeader(k, v)
      ctx.send(e.status, JSON.stringify(body), JSON_TYPE)
      return
    }
    if (sink.stream !== undefined) {
      if (out.response !== undefined) sink.stream.send({ event: 'message', data: JSON.stringify(out.response) })
      sink.stream.close()
      return
    }
    if (ctx.done) return
    const created = cctx.createdSession
    if (created !== undefined) ctx.setHeader('mcp-session-id', created.id)
    if (out.response === undefined) {
      ctx.empty(out.status)
      return
    }
    ctx.send(out.status, JSON.stringify(out.response), JSON_TYPE)
  }

  /** GET: the session's notification stream (list changes, resource updates, server requests). */
  private get(ctx: Context, ep: EndpointRef): void {
    const sid = ctx.headers['mcp-session-id']
    if (sid === undefined || sid === '') {
      ctx.setHeader('allow', 'POST, DELETE')
      sendError(
        ctx,
        405,
        ErrorCode.ServerError,
        'Method not allowed: GET opens the notification stream of a session (send Mcp-Session-Id); the 2026-07-28 dialect has none'
      )
      return
    }
    const accept = ctx.headers.accept ?? ''
    if (accept !== '' && !accept.includes('text/event-stream') && !accept.includes('*/*')) {
      sendError(ctx, 406, ErrorCode.ServerError, 'Not Acceptable: Client must accept text/event-stream')
      return
    }
    const s = this.owned(ctx, sid)
    if (s === undefined || s.record.endpoint !== ep.path) {
      sendError(ctx, 404, ErrorCode.SessionNotFound, 'Session not found')
      return
    }
    if (s.channel !== undefined) {
      sendError(ctx, 409, ErrorCode.ServerError, 'Conflict: Only one SSE stream is allowed per session')
      return
    }
    const stream = ctx.sse({ headers: { 'mcp-session-id': s.id } })
    // resumability: every event has an id; a reconnect with Last-Event-ID first gets what it missed
    const history = (s.history ??= new StreamHistory())
    const last = ctx.headers['last-event-id']
    if (last !== undefined)
      for (const e of history.after(last)) stream.send({ id: e.id, event: 'message', data: e.data })
    const send = (msg: JsonObject): boolean => {
      const e = history.record(msg)
      return stream.send({ id: e.id, event: 'message', data: e.data }) || !stream.closed
    }
    s.channel = send
    s.closeChannel = () => {
      stream.close()
    }
    stream.onClose(() => {
      if (s.channel === send) {
        s.channel = undefined
        s.closeChannel = undefined
      }
    })
  }

  /** The session only for the caller that opened it: anyone else gets the answer an unknown id gets. */
  private owned(ctx: Context, sid: string): Session | undefined {
    return this.core.sessions.owned(
      sid,
      callerOf({ principal: this.platform.principals.resolve(ctx)?.name ?? null, ...clientAddress(ctx) })
    )
  }

  private delete(ctx: Context, ep: EndpointRef): void {
    const sid = ctx.headers['mcp-session-id']
    if (sid === undefined || sid === '') {
      sendError(ctx, 400, ErrorCode.ServerError, 'Bad Request: Mcp-Session-Id header is required')
      return
    }
    const s = this.owned(ctx, sid)
    if (s === undefined || s.record.endpoint !== ep.path) {
      sendError(ctx, 404, ErrorCode.SessionNotFound, 'Session not found')
      return
    }
    this.core.sessions.delete(sid)
    ctx.empty(204)
  }
}
