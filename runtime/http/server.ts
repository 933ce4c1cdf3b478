import uWS, {
  type HttpResponse,
  type HttpRequest,
  type TemplatedApp,
  type WebSocketBehavior,
  type us_listen_socket
} from 'uWebSockets.js'
import type { Logger } from 'pino'
import { Context, type ContextOwner } from './context.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { parseJsonBody } from './json-body.js'
import { SseStream, type SseOptions } from './sse.js'
import type { Metrics } from '../observability/index.js'
import { explainListenFailure } from './listen-error.js'
import { Linger } from './linger.js'
import type { DocumentedRoute, RouteDoc } from './route-doc.js'
import { Cors } from './cors.js'
import { OriginPolicy } from './origin-policy.js'
import type { Handler, Method, MethodEntry, RouteEntry, RouteOptions } from './route.js'
import { HTTP_ERRORS } from './errors.js'
import { TrustedProxies, peerAddress } from './trusted-proxies.js'

export interface HttpServerOptions {
  logger: Logger
  metrics: Metrics
  bodyLimit: number
  jsonMaxDepth: number
  corsOrigins: readonly string[]
  /** platform.server.allowed-origins: who may open the routes registered with `checkOrigin`. */
  allowedOrigins?: readonly string[]
  /** platform.server.trusted-proxies: peers whose X-Forwarded-For names the client. */
  trustedProxies?: readonly string[]
  heartbeatMs: number
}

/** uSockets' listen option that leaves SO_REUSEPORT off. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const UNMATCHED = '<unmatched>'

/**
 * The HTTP core on uWebSockets.js: a router with `{param}` segments and per-route methods (405 with
 * Allow), JSON bodies under a byte limit (413, then a bounded lingering close), CORS, request ids, metrics
 * by route pattern, SSE, and a graceful close that waits for in-flight responses.
 */
export class HttpServer implements ContextOwner {
  readonly app: TemplatedApp = uWS.App()
  private readonly routes = new Map<string, RouteEntry>()
  private readonly docs = new Map<string, DocumentedRoute>()
  private listenSocket: us_listen_socket | undefined
  private inFlight = 0
  private closing = false
  private readonly sseStreams = new Set<SseStream>()
  private heartbeat: NodeJS.Timeout | undefined
  private readonly shutdownHooks: (() => void | Promise<void>)[] = []
  private readonly cors: Cors
  /** The browser-origin rule every browser-reachable endpoint applies (WebSocket upgrades ask it directly). */
  readonly origins: OriginPolicy
  /** Whose X-Forwarded-For names the client (platform.server.trusted-proxies). */
  readonly proxies: TrustedProxies
  private drainWaiters: (() => void)[] = []
  port = 0

  constructor(readonly opts: HttpServerOptions) {
    this.cors = new Cors(opts.corsOrigins)
    this.origins = new OriginPolicy(opts.allowedOrigins ?? [])
    this.proxies = new TrustedProxies(opts.trustedProxies ?? [])
  }

  /** A WebSocket upgrade's client address (as `Context.address`): in the handler, before `res.upgrade`. */
  upgradeAddress(res: HttpResponse, headers: Readonly<Record<string, string | undefined>>): string {
    return this.proxies.client(peerAddress(res), headers['x-forwarded-for'])
  }

  /**
   * The 403 for a request whose `Origin` the rule refuses, or undefined when it may proceed; for
   * WebSocket upgrades and routes that answer in their own protocol (`checkOrigin` does it for the rest).
   */
  originRefusal(headers: Readonly<Record<string, string | undefined>>, path: string): PlatformError | undefined {
    const origin = headers.origin
    if (this.origins.allowed(origin, headers.host)) return undefined
    return new PlatformError(HTTP_ERRORS.ORIGIN_FORBIDDEN, { origin: origin!.slice(0, 200), path: path.slice(0, 200) })
  }

  /** Registers `handler` for `method` on `pattern` (`/api/things/{id}`). */
  route(method: Method | Method[], pattern: string, handler: Handler, opts: RouteOptions = {}): this {
    let entry = this.routes.get(pattern)
    if (entry === undefined) {
      const paramNames: string[] = []
      const uwsPattern = pattern.replace(/\{([^}]+)\}/g, (_, n: string) => {
        paramNames.push(n)
        return `:${n}`
      })
      entry = { pattern, paramNames, methods: new Map(), allow: '' }
      this.routes.set(pattern, entry)
      const e = entry
      this.app.any(uwsPattern, (res, req) => {
        this.dispatch(e, res, req)
      })
    }
    for (const m of Array.isArray(method) ? method : [method]) {
      if (entry.methods.has(m)) throw new Error(`route ${m} ${pattern} registered twice`)
      entry.methods.set(m, { handler, opts, stats: this.opts.metrics.routes.for(pattern, m) })
    }
    entry.allow = [...entry.methods.keys(), 'OPTIONS'].join(', ')
    return this
  }

  get(pattern: string, handler: Handler, opts?: RouteOptions): this {
    return this.route('GET', pattern, handler, opts)
  }
  post(pattern: string, handler: Handler, opts: RouteOptions = { body: 'json' }): this {
    return this.route('POST', pattern, handler, opts)
  }
  delete(pattern: string, handler: Handler, opts?: RouteOptions): this {
    return this.route('DELETE', pattern, handler, opts)
  }

  /** WebSocket route; HTTP routes may share the pattern (uWS yields non-upgrade requests to them). */
  ws<U>(pattern: string, behavior: WebSocketBehavior<U>): this {
    this.app.ws(pattern.replace(/\{([^}]+)\}/g, ':$1'), {
      maxPayloadLength: this.opts.bodyLimit,
      ...behavior
    })
    return this
  }

  /** Run on close before in-flight responses are awaited: transports close their sockets here. */
  onShutdown(fn: () => void | Promise<void>): void {
    this.shutdownHooks.push(fn)
  }

  /** Documents a registered route for the OpenAPI generator; an unregistered one is a programming error. */
  describe(method: Method, pattern: string, doc: RouteDoc): this {
    if (this.routes.get(pattern)?.methods.has(method) !== true)
      throw new Error(`cannot describe ${method} ${pattern}: not registered`)
    this.docs.set(`${method} ${pattern}`, { method, pattern, doc })
    return this
  }

  /** The routes documented with describe(), in the order they were described. */
  describedRoutes(): DocumentedRoute[] {
    return [...this.docs.values()]
  }

  listRoutes(): { pattern: string; methods: string[] }[] {
    return [...this.routes.values()].map((r) => ({ pattern: r.pattern, methods: [...r.methods.keys()] }))
  }

  async listen(host: string, port: number): Promise<number> {
    this.app.any('/*', (res, req) => {
      this.unmatched(res, req)
    })
    this.heartbeat = setInterval(() => {
      this.beat()
    }, this.opts.heartbeatMs)
    this.heartbeat.unref()
    return await new Promise((resolve, reject) => {
      // exclusive: without it uWS sets SO_REUSEPORT and a second server silently shares the port
      listenWithOptions(this.app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (ls) => {
        if (ls === false) {
          explainListenFailure(host, port).then(reject, reject)
          return
        }
        this.listenSocket = ls
        this.port = uWS.us_socket_local_port(ls)
        resolve(this.port)
      })
    })
  }

  get isClosing(): boolean {
    return this.closing
  }

  /** Stops accepting, runs shutdown hooks, ends SSE streams, waits for in-flight responses. */
  async close(timeoutMs: number): Promise<void> {
    if (this.closing) return
    this.closing = true
    if (this.listenSocket !== undefined) {
      uWS.us_listen_socket_close(this.listenSocket)
      this.listenSocket = undefined
    }
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat)
    for (const fn of this.shutdownHooks) {
      try {
        await fn()
      } catch (err) {
        this.opts.logger.error({ err }, 'shutdown hook failed')
      }
    }
    for (const s of [...this.sseStreams]) s.close()
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, timeoutMs)
        this.drainWaiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
  }

  // --- ContextOwner ---

  finished(ctx: Context, status: number): void {
    const stats = ctx.stats ?? this.opts.metrics.routes.for(ctx.route, ctx.method)
    stats.record(status, (performance.now() - ctx.startedAt) / 1000)
    if (--this.inFlight === 0 && this.drainWaiters.length > 0) for (const w of this.drainWaiters.splice(0)) w()
  }

  openSse(ctx: Context, opts: SseOptions): SseStream {
    // an SSE stream is not an in-flight response: it ends by close(), not by completing
    const stream = new SseStream(ctx, opts, (s) => {
      this.sseStreams.delete(s)
      this.opts.metrics.openConnections.dec({ transport: 'sse' })
      // counted here, so every SSE stream (rooms, agents, MCP, interactions) counts the same way
      if (s.slow) this.opts.metrics.slowConsumers.inc()
    })
    this.sseStreams.add(stream)
    this.opts.metrics.openConnections.inc({ transport: 'sse' })
    this.finished(ctx, 200)
    return stream
  }

  corsHeaders(ctx: Context): [string, string][] | undefined {
    return this.cors.headers(ctx)
  }

  // --- dispatch ---

  private dispatch(entry: RouteEntry, res: HttpResponse, req: HttpRequest): void {
    const ctx = new Context(res, req, entry.pattern, entry.paramNames, this)
    this.handle(ctx, entry)
    // uWS invalidates req when this callback returns: a response still open keeps its headers
    ctx.release()
  }

  private handle(ctx: Context, entry: RouteEntry): void {
    this.inFlight++
    if (this.closing) {
      ctx.send(503, JSON.stringify(new PlatformError(HTTP_ERRORS.SHUTTING_DOWN).body()), 'application/json', true)
      return
    }
    const m = entry.methods.get(ctx.method)
    if (m === undefined) {
      if (ctx.method === 'OPTIONS') {
        this.cors.preflight(ctx, entry.allow)
        return
      }
      ctx.setHeader('allow', entry.allow)
      ctx.error(new PlatformError(HTTP_ERRORS.METHOD_NOT_ALLOWED, { method: ctx.method, path: ctx.path }))
      return
    }
    ctx.stats = m.stats
    if (m.opts.checkOrigin === true) {
      const refused = this.originRefusal({ origin: ctx.header('origin'), host: ctx.header('host') }, ctx.path)
      if (refused !== undefined) {
        ctx.error(refused)
        return
      }
    }
    if (m.opts.body !== undefined && BODY_METHODS.has(ctx.method)) {
      this.readBody(ctx, m)
      return
    }
    this.run(ctx, m)
  }

  private run(ctx: Context, m: MethodEntry): void {
    let out: unknown
    try {
      out = m.handler(ctx)
    } catch (err) {
      this.fail(ctx, err)
      return
    }
    if (out instanceof Promise) {
      if (!ctx.done) ctx.watchAbort()
      out.then(
        (v) => {
          this.complete(ctx, v)
        },
        (err) => {
          this.fail(ctx, err)
        }
      )
    } else {
      this.complete(ctx, out)
    }
  }

  private complete(ctx: Context, value: unknown): void {
    if (ctx.done) return
    if (value === undefined) ctx.empty(204)
    else ctx.json(value)
  }

  private fail(ctx: Context, err: unknown): void {
    if (isWireError(err)) {
      ctx.error(err)
      return
    }
    this.opts.logger.error({ err, requestId: ctx.requestId, route: ctx.route }, 'route handler failed')
    ctx.error(new PlatformError(HTTP_ERRORS.INTERNAL))
  }

  private readBody(ctx: Context, m: MethodEntry): void {
    const limit = m.opts.bodyLimit ?? this.opts.bodyLimit
    const res = ctx.res
    ctx.watchAbort()
    // over the limit: answer now, then drain the rest for a bounded while and close (Linger)
    let linger: Linger | undefined
    if (Number(ctx.header('content-length')) > limit) linger = this.tooLarge(ctx, m, limit)
    const chunks: Buffer[] = []
    let size = 0
    res.onData((ab, isLast) => {
      if (linger !== undefined) {
        linger.data(ab.byteLength, isLast)
        return
      }
      if (ctx.done) return
      size += ab.byteLength
      if (size > limit) {
        chunks.length = 0
        linger = this.tooLarge(ctx, m, limit)
        linger.data(size, isLast)
        return
      }
      // uWS neuters the ArrayBuffer on return: copy it
      chunks.push(Buffer.from(ab.slice(0)))
      if (!isLast) return
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
      ctx.rawBody = buf
      if (m.opts.body === 'json') {
        if (buf.length === 0 || isBlank(buf)) {
          if (m.opts.optionalBody !== true) {
            ctx.error(new PlatformError(HTTP_ERRORS.EMPTY_BODY))
            return
          }
        } else {
          try {
            ctx.body = parseJsonBody(buf, this.opts.jsonMaxDepth)
          } catch (err) {
            this.fail(ctx, err)
            return
          }
        }
      }
      this.run(ctx, m)
    })
  }

  /** Answers 413 (the route's own body, else the catalogue's) and lingers over the rest of the body. */
  private tooLarge(ctx: Context, m: MethodEntry, limit: number): Linger {
    const own = m.opts.tooLarge?.(limit)
    if (own !== undefined) return new Linger(ctx, 413, own.body, own.contentType)
    return new Linger(
      ctx,
      413,
      JSON.stringify(new PlatformError(HTTP_ERRORS.BODY_TOO_LARGE, { limit }).body()),
      'application/json'
    )
  }

  private unmatched(res: HttpResponse, req: HttpRequest): void {
    const ctx = new Context(res, req, UNMATCHED, [], this)
    this.inFlight++
    ctx.error(new PlatformError(HTTP_ERRORS.NOT_FOUND))
    ctx.release()
  }

  private beat(): void {
    for (const s of this.sseStreams) s.comment('heartbeat')
  }
}

/** The typings lack uWS's (host, port, options, cb) overload, which the native build and its fallback both take. */
type ListenCb = (ls: us_listen_socket | false) => void
function listenWithOptions(app: TemplatedApp, host: string, port: number, options: number, cb: ListenCb): void {
  ;(app.listen as unknown as (this: TemplatedApp, h: string, p: number, o: number, cb: ListenCb) => TemplatedApp).call(
    app,
    host,
    port,
    options,
    cb
  )
}

function isBlank(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false
  }
  return true
}
