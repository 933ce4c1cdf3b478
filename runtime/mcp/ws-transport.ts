import type { WebSocket, HttpResponse, HttpRequest, us_socket_context_t } from 'uWebSockets.js'
import type { Platform } from '../platform.js'
import { tokenOf, type Principal } from '../auth/index.js'
import { parseJsonBody, requestHeaders, upgradeWith } from '../http/index.js'
import type { McpCore } from './core.js'
import { PlatformError } from '../contracts/index.js'
import { ErrorCode, rpcError, MCP_ERRORS, rpcFailure, isRpcFailure, rpcErrorMember } from './errors.js'
import type { OriginPolicy } from '../http/index.js'
import type { Session } from './sessions.js'
import type { CallContext, EndpointRef, JsonObject, Sink } from './types.js'

/**
 * `credentials`: the upgrade's credential headers, resolved again once `principalUntil` passes so an
 * expired JWT stops counting (at most once a second: an RS256 check costs ~45 µs, too much per frame).
 */
interface WsData {
  endpoint: EndpointRef
  credentials: Record<string, string> | undefined
  principal: string | null
  caller: Principal | null
  principalUntil: number
  address: string
  session?: Session
  ac: AbortController
  closed: boolean
  bearer?: string
}

const CREDENTIAL_HEADERS = ['authorization', 'x-platform-auth']
const PRINCIPAL_RECHECK_MS = 1000

/**
 * MCP over WebSocket on the same path: one JSON-RPC message per text frame, both dialects. A
 * session opened by `initialize` on a socket lives as long as the socket; its notifications and
 * server requests travel on it. A consumer that stops reading is closed (1008) rather than buffered.
 */
export class WsTransport {
  private readonly maxBackpressure: number
  private readonly maxDepth: number
  constructor(
    private readonly platform: Platform,
    private readonly core: McpCore,
    private readonly origins: OriginPolicy
  ) {
    this.maxBackpressure = platform.config.get('platform.transport.max-backpressure-bytes')
    this.maxDepth = platform.config.get('platform.server.json-max-depth')
  }

  mount(
    pattern: string,
    resolve: (path: string, param: (i: number) => string | undefined) => EndpointRef | undefined,
    maxPayload: number | undefined
  ): void {
    const sockets = new Set<WebSocket<WsData>>()
    this.platform.http.onShutdown(() => {
      for (const ws of sockets) {
        try {
          ws.end(1001, 'server shutting down')
        } catch {
          /* already gone */
        }
      }
    })
    this.platform.http.ws<WsData>(pattern, {
      ...(maxPayload !== undefined ? { maxPayloadLength: maxPayload } : {}),
      upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
        const headers = requestHeaders(req)
        const path = req.getUrl()
        const ep = resolve(path, (i) => req.getParameter(i))
        if (!this.origins.allowed(headers.origin, headers.host)) {
          res.cork(() => {
            res
              .writeStatus('403 Forbidden')
              .end(JSON.stringify(rpcError(null, { code: -32600, message: 'Forbidden Origin' })))
          })
          return
        }
        if (ep === undefined) {
          res.cork(() => {
            res
              .writeStatus('404 Not Found')
              .end(JSON.stringify(rpcError(null, { code: -32600, message: `No MCP endpoint at ${path}` })))
          })
          return
        }
        // behind a trusted proxy, the client it names: session caps and ownership count by it
        const address = this.platform.http.upgradeAddress(res, headers)
        let credentials: Record<string, string> | undefined
        for (const k of CREDENTIAL_HEADERS) if (headers[k] !== undefined) (credentials ??= {})[k] = headers[k]
        res.cork(() => {
          const data: WsData = {
            endpoint: ep,
            credentials,
            principal: null,
            caller: null,
            principalUntil: 0,
            address,
            ac: new AbortController(),
            closed: false
          }
          const bearer = tokenOf(headers)
          if (bearer !== undefined) data.bearer = bearer
          upgradeWith<WsData>(res, data, headers, context)
        })
      },
      open: (ws) => {
        sockets.add(ws)
      },
      message: (ws, message, isBinary) => {
        // a copy: uWS reuses the frame's memory once this handler returns
        void this.onMessage(ws, Buffer.from(message.slice(0)), isBinary)
      },
      close: (ws) => {
        sockets.delete(ws)
        const d = ws.getUserData()
        d.closed = true
        d.ac.abort()
        if (d.session !== undefined) this.core.sessions.delete(d.session.id)
      }
    })
  }

  private send(ws: WebSocket<WsData>, msg: JsonObject): boolean {
    const d = ws.getUserData()
    if (d.closed) return false
    if (ws.getBufferedAmount() > this.maxBackpressure) {
      d.closed = true
      this.platform.metrics.slowConsumers.inc()
      ws.end(1008, 'slow consumer')
      return false
    }
    ws.send(JSON.stringify(msg), false)
    return true
  }

  private async onMessage(ws: WebSocket<WsData>, frame: Buffer, isBinary: boolean): Promise<void> {
    const d = ws.getUserData()
    let msg: unknown
    try {
      if (isBinary) throw new Error('binary frames are not JSON-RPC')
      // the HTTP path's depth limit, before anything (a session above all) is made of the message
      msg = parseJsonBody(frame, this.maxDepth)
    } catch (err) {
      this.send(ws, rpcError(null, { code: ErrorCode.ParseError, message: `Parse error: ${(err as Error).message}` }))
      return
    }
    const id = msg !== null && typeof msg === 'object' && !Array.isArray(msg) ? (msg as JsonObject).id : undefined
    const sink: Sink = {
      notify: (m) => {
        this.send(ws, m)
      },
      canStream: true,
      request: async (method, params) => {
        const s = d.session
        if (s === undefined)
          throw new PlatformError(MCP_ERRORS.MCP_INTERNAL_ERROR, {
            detail: 'Server requests need a session (initialize first)'
          })
        const rid = s.newRequestId()
        return await new Promise((resolve, reject) => {
          s.pending.set(rid, { resolve, reject })
          if (!this.send(ws, { jsonrpc: '2.0', id: rid, method, params })) {
            s.pending.delete(rid)
            reject(new Error('socket closed'))
          }
        })
      }
    }
    // every credential the HTTP path accepts (configured tokens, JWTs, registered sources)
    if (d.credentials !== undefined && Date.now() >= d.principalUntil) {
      d.caller = this.platform.principals.fromHeaders(d.credentials)
      d.principal = d.caller?.name ?? null
      d.principalUntil = Date.now() + PRINCIPAL_RECHECK_MS
    }
    const cctx: CallContext = {
      endpoint: d.endpoint,
      transport: 'ws',
      principal: d.principal,
      caller: d.caller,
      address: d.address,
      sink,
      signal: d.ac.signal
    }
    if (d.bearer !== undefined) cctx.bearer = d.bearer
    const isInit = msg !== null && typeof msg === 'object' && (msg as JsonObject).method === 'initialize'
    if (d.session !== undefined && !isInit) cctx.session = d.session
    try {
      const out = await this.core.handle(msg, cctx)
      if (cctx.createdSession !== undefined) {
        if (d.session !== undefined) this.core.sessions.delete(d.session.id)
        d.session = cctx.createdSession
        d.session.channel = (m) => this.send(ws, m)
      }
      if (out.response !== undefined) this.send(ws, out.response)
    } catch (err) {
      const known = isRpcFailure(err)
      if (!known) this.platform.logger.error({ err }, 'MCP WebSocket dispatch failed')
      // a notification's in-band failure has no id to answer; a rejection or a crash is still said
      if (id !== undefined || !known || err.status >= 400)
        this.send(
          ws,
          rpcError(typeof id === 'string' || typeof id === 'number' ? id : null, rpcErrorMember(rpcFailure(err)))
        )
    }
  }
}
