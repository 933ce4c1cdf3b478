import type { HttpResponse, HttpRequest, us_socket_context_t } from 'uWebSockets.js'
import { randomBytes } from 'node:crypto'
import { PlatformError } from '../contracts/index.js'
import { statusLine } from './status.js'
import type { SseStream, SseOptions } from './sse.js'
import type { RouteStats } from '../observability/index.js'
import { peerAddress, type TrustedProxies } from './trusted-proxies.js'

/** What the server needs from a context to finish it (kept narrow so context.ts has no cycle). */
export interface ContextOwner {
  finished(ctx: Context, status: number): void
  openSse(ctx: Context, opts: SseOptions): SseStream
  corsHeaders(ctx: Context): [string, string][] | undefined
  /** Whose X-Forwarded-For names the client (platform.server.trusted-proxies). */
  readonly proxies: TrustedProxies
}

/**
 * A client's X-Request-Id is echoed (and logged) only when it is this safe: quotes, braces or
 * spaces would let a client forge log records or headers, so anything else gets a minted id.
 */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
// minted ids: a random per-process prefix and a counter (unique, and no UUID per request)
const ID_PREFIX = randomBytes(6).toString('hex')
let idSeq = 0

// uWS hands headers over synchronously one by one: copy them with one hoisted function
let target: Record<string, string> = {}
function copyHeader(k: string, v: string): void {
  // a proxy may add its own X-Forwarded-For line below the client's (HAProxy does): keep every
  // line, in order, or the client's line would hide the one the proxy wrote
  if (k === 'x-forwarded-for' && target[k] !== undefined) target[k] = `${target[k]}, ${v}`
  else target[k] = v
}

/** A request's headers (lowercase names) as a plain object; uWS lets them be read only during its callback. */
export function requestHeaders(req: HttpRequest): Record<string, string> {
  const headers: Record<string, string> = (target = {})
  req.forEach(copyHeader)
  return headers
}

/** Finishes a WebSocket upgrade that waited on async work, from the headers `requestHeaders` copied. */
export function upgradeWith<T>(
  res: HttpResponse,
  data: T,
  headers: Record<string, string>,
  context: us_socket_context_t
): void {
  res.upgrade<T>(
    data,
    headers['sec-websocket-key'] ?? '',
    headers['sec-websocket-protocol'] ?? '',
    headers['sec-websocket-extensions'] ?? '',
    context
  )
}

// header names and frequent values pre-encoded once: uWS would convert strings on every write
const H_CONTENT_TYPE = Buffer.from('content-type')
const H_REQUEST_ID = Buffer.from('x-request-id')
const ENCODED = new Map<string, Buffer>()
function encoded(v: string): Buffer {
  let b = ENCODED.get(v)
  if (b === undefined) {
    b = Buffer.from(v)
    if (ENCODED.size < 64) ENCODED.set(v, b)
  }
  return b
}

/**
 * One request. What uWS hands over only synchronously is copied at dispatch (url, query, params)
 * or, for headers, before the server releases the request (see `release`), so handlers may await
 * freely. Writing after the client went away is a no-op.
 */
export class Context {
  readonly method: string
  readonly path: string
  readonly rawQuery: string
  readonly params: Record<string, string>
  readonly requestId: string
  readonly startedAt = performance.now()
  /** Parsed JSON body (routes declared with `body: 'json'`), or the raw bytes (`body: 'raw'`). */
  body: unknown = undefined
  rawBody: Buffer | undefined = undefined
  aborted = false
  /** True once a response (or an SSE stream) has started. */
  done = false
  /** True once the response was ended (an SSE stream is done but not ended). */
  ended = false
  status = 0
  /** The matched route's metrics, set by the server once the method is known. */
  stats: RouteStats | undefined = undefined
  /** Per-request scratch space for layers (auth, MCP) */
  readonly state: Record<string, unknown> = {}
  private extraHeaders: [string, string][] | undefined
  private abortListeners: (() => void)[] | undefined
  private _query: URLSearchParams | undefined
  private _headers: Record<string, string> | undefined
  /** The uWS request, valid only during the synchronous dispatch (released by the server). */
  private req: HttpRequest | undefined

  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    readonly route: string,
    paramNames: readonly string[],
    readonly owner: ContextOwner
  ) {
    this.req = req
    this.method = req.getCaseSensitiveMethod()
    this.path = req.getUrl()
    this.rawQuery = req.getQuery() ?? ''
    const given = req.getHeader('x-request-id')
    this.requestId = given !== '' && REQUEST_ID.test(given) ? given : `${ID_PREFIX}-${(++idSeq).toString(36)}`
    const params: Record<string, string> = {}
    for (let i = 0; i < paramNames.length; i++) {
      const raw = req.getParameter(i) ?? ''
      try {
        params[paramNames[i]!] = decodeURIComponent(raw)
      } catch {
        params[paramNames[i]!] = raw
      }
    }
    this.params = params
  }

  get query(): URLSearchParams {
    return (this._query ??= new URLSearchParams(this.rawQuery))
  }

  /**
   * Request headers (lowercase names). Copied from uWS only when needed: on first access, or when
   * the server releases the request of a response that outlives the handler's synchronous part.
   */
  get headers(): Record<string, string> {
    if (this._headers === undefined) {
      if (this.req === undefined) throw new Error('request headers read after the request was released')
      this._headers = requestHeaders(this.req)
    }
    return this._headers
  }

  /**
   * The client's address as text (empty once the client went away): the peer's, or behind a
   * trusted proxy the one its X-Forwarded-For names (see TrustedProxies).
   */
  address(): string {
    if (this.aborted) return ''
    const peer = peerAddress(this.res)
    const proxies = this.owner.proxies
    return proxies.trusts(peer) ? proxies.clientBehind(peer, this.forwardedFor()) : peer
  }

  /** Every X-Forwarded-For line, comma-joined (uWS's getHeader gives the first line only). */
  private forwardedFor(): string | undefined {
    return this.req === undefined && this._headers === undefined ? undefined : this.headers['x-forwarded-for']
  }

  header(name: string): string | undefined {
    if (this._headers !== undefined || this.req === undefined) return this._headers?.[name]
    const v = this.req.getHeader(name)
    return v === '' ? undefined : v
  }

  /** Called by the server before uWS invalidates the request: keeps the headers if still needed. */
  release(): void {
    if (this.req === undefined) return
    if (!this.ended) void this.headers
    this.req = undefined
  }

  /** Adds a header to the response this context will send. */
  setHeader(name: string, value: string): this {
    ;(this.extraHeaders ??= []).push([name, value])
    return this
  }

  onAbort(fn: () => void): void {
    if (this.aborted) {
      fn()
      return
    }
    ;(this.abortListeners ??= []).push(fn)
  }

  private watching = false
  /**
   * Registers the uWS abort handler (once). uWS aborts the process if a handler returns without
   * responding or watching, so every path that outlives the handler's first tick calls this.
   */
  watchAbort(): void {
    if (this.watching) return
    this.watching = true
    this.res.onAborted(() => {
      this.abort()
    })
  }

  /** The client went away: nothing more is written, listeners are told. */
  abort(): void {
    if (this.aborted) return
    this.aborted = true
    const wasDone = this.done
    this.done = true
    const ls = this.abortListeners
    this.abortListeners = undefined
    if (ls !== undefined)
      for (const fn of ls) {
        try {
          fn()
        } catch {
          /* a listener must not break teardown */
        }
      }
    if (!wasDone) this.owner.finished(this, 499)
  }

  json(body: unknown, status = 200): boolean {
    return this.send(status, JSON.stringify(body) ?? 'null', 'application/json')
  }

  error(err: PlatformError): boolean {
    return this.send(err.status, JSON.stringify(err.body()), 'application/json')
  }

  empty(status = 204): boolean {
    return this.send(status, undefined, undefined)
  }

  /** Writes status, headers and body in one corked write. Returns false if nothing was written. */
  send(
    status: number,
    body: string | Buffer | undefined,
    contentType: string | undefined,
    closeConnection = false
  ): boolean {
    if (this.done) return false
    this.done = true
    this.ended = true
    this.status = status
    const res = this.res
    res.cork(() => {
      res.writeStatus(statusLine(status))
      if (contentType !== undefined) res.writeHeader(H_CONTENT_TYPE, encoded(contentType))
      res.writeHeader(H_REQUEST_ID, this.requestId)
      this.writeHeaders()
      if (body === undefined) res.endWithoutBody(0, closeConnection)
      else res.end(body, closeConnection)
    })
    this.owner.finished(this, status)
    return true
  }

  /**
   * Sends status, headers and the whole body, but holds the response open (and the connection with
   * it) until `endHeld`: for answers given before the request body was read (see Linger).
   */
  sendHeld(status: number, body: string, contentType: string): void {
    if (this.done) return
    this.done = true
    this.status = status
    const res = this.res
    res.cork(() => {
      res.writeStatus(statusLine(status))
      res.writeHeader(H_CONTENT_TYPE, encoded(contentType))
      res.writeHeader(H_REQUEST_ID, this.requestId)
      res.writeHeader('connection', 'close')
      this.writeHeaders()
      res.write(body)
    })
    this.owner.finished(this, status)
  }

  /**
   * Finishes a response begun by `sendHeld`: `close` drops the connection at once (the response
   * stays incomplete), otherwise the body is terminated and the client, told `connection: close`,
   * closes it. (uWS's own end-and-close repeats the Connection header into a chunked body.)
   */
  endHeld(close: boolean): void {
    if (this.ended || this.aborted) return
    this.ended = true
    const res = this.res
    if (close) res.close()
    else
      res.cork(() => {
        res.end(undefined, false)
      })
  }

  /** Writes the CORS and extra headers; for streaming writers (SSE) that manage their own status. */
  writeHeaders(): void {
    const res = this.res
    const cors = this.owner.corsHeaders(this)
    if (cors !== undefined) for (const [k, v] of cors) res.writeHeader(k, v)
    if (this.extraHeaders !== undefined) for (const [k, v] of this.extraHeaders) res.writeHeader(k, v)
  }

  /** Turns this response into a Server-Sent Events stream. */
  sse(opts: SseOptions = {}): SseStream {
    if (this.done) throw new Error('response already started')
    return this.owner.openSse(this, opts)
  }
}
