import type { HttpRequest, HttpResponse, WebSocket, us_socket_context_t } from 'uWebSockets.js'
import type { Platform } from '../platform.js'
import { requestHeaders, statusLine, upgradeWith, type Context, type SseStream } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { StreamSession, type StreamLimits, type StreamSink } from './stream-session.js'
import type { Interaction, InteractionFeed, InteractionStore } from './types.js'
import type { STREAM_PATH as CLIENT_STREAM_PATH } from 'uws-agent-platform/client'
import { HTTP_ERRORS } from '../http/index.js'
import { INTERACTION_ERRORS } from './errors.js'

// typed by the client's declaration: the path the client dials cannot differ from the one served
export const STREAM_PATH: typeof CLIENT_STREAM_PATH = '/platform/interactions-stream'

/** What the stream reads: the store (truth, replay), the feed (live steps) and the REST read's access rule. */
export interface StreamSource {
  readonly store: InteractionStore
  readonly feed: InteractionFeed
  /**
   * The interaction `headers` may read, exactly as the REST read decides (a not-owned id answers
   * like an unknown one); throws the PlatformError that read would answer.
   */
  readable(id: string, headers: Readonly<Record<string, string>>): Promise<Interaction>
}

interface WsData {
  session: StreamSession | undefined
  record: Interaction | undefined
  sink: WsSink | undefined
}

/** A waiting stream resumes once its client has this little left to read. */
const LOW_WATER = 16 * 1024

const ID = /^[A-Za-z0-9_-]{1,128}$/

// a WebSocket sink's state
const OPEN = 0
const BATCHING = 1
const CLOSED = 2

/**
 * The request's credentials, with `access_token` from the query turned into a bearer header: a
 * browser's EventSource and WebSocket cannot set headers. A header the client did send wins.
 */
export function credentialHeaders(
  headers: Readonly<Record<string, string>>,
  query: URLSearchParams
): Record<string, string> {
  const h = { ...headers }
  const t = query.get('access_token')
  if (t !== null && t !== '' && h.authorization === undefined && h['x-platform-auth'] === undefined)
    h.authorization = `Bearer ${t}`
  return h
}

/**
 * The seq to resume after: the larger of `?after=` and `Last-Event-ID` (an EventSource reconnects
 * with its original URL, so the header is the newer of the two); -1 replays everything.
 */
export function resumePoint(query: URLSearchParams, lastEventId: string | undefined): number {
  let after = -1
  for (const [name, raw] of [
    ['after', query.get('after')],
    ['Last-Event-ID', lastEventId]
  ] as const) {
    if (raw === null || raw === undefined || raw === '') continue
    if (!/^-?\d{1,15}$/.test(raw) || Number(raw) < -1)
      throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, {
        name,
        detail: 'expected a step seq (an integer, -1 or more)'
      })
    after = Math.max(after, Number(raw))
  }
  return after
}

function streamId(query: URLSearchParams): string {
  const id = query.get('id')
  if (id === null || !ID.test(id)) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_ID_INVALID)
  return id
}

/** Serves the live stream of one interaction over WebSocket and SSE on STREAM_PATH. */
export class InteractionStreams {
  private readonly limits: StreamLimits
  private readonly maxBackpressure: number
  private readonly sockets = new Set<WebSocket<WsData>>()

  constructor(
    private readonly platform: Platform,
    private readonly source: StreamSource
  ) {
    this.maxBackpressure = platform.config.get('platform.transport.max-backpressure-bytes')
    this.limits = {
      highWater: Math.min(64 * 1024, this.maxBackpressure),
      stallMs: platform.config.get('platform.interactions.stream.stall-seconds') * 1000,
      pageSize: 200
    }
  }

  mount(): void {
    const { http } = this.platform
    http.get(
      STREAM_PATH,
      async (ctx) => {
        const query = ctx.query
        const id = streamId(query)
        await this.sse(ctx, id, resumePoint(query, ctx.headers['last-event-id']))
      },
      { checkOrigin: true }
    )
    http.ws<WsData>(STREAM_PATH, {
      maxPayloadLength: 1024,
      // uWS buffers up to twice the limit; the session stops pushing at its high-water mark long before
      maxBackpressure: this.maxBackpressure * 2,
      closeOnBackpressureLimit: 0,
      idleTimeout: Math.max(8, this.platform.config.get('platform.transport.heartbeat-seconds') * 2),
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => {
        this.upgrade(res, req, context)
      },
      open: (ws) => {
        this.sockets.add(ws)
        const d = ws.getUserData()
        d.sink = new WsSink(ws)
        d.session!.start(d.sink, d.record!)
        d.record = undefined
      },
      drain: (ws) => {
        ws.getUserData().sink?.wake()
      },
      // the stream is one-way: what a client sends is ignored
      message: () => {},
      close: (ws) => {
        this.sockets.delete(ws)
        const d = ws.getUserData()
        d.sink?.ended()
        d.session?.stop()
      }
    })
    http.onShutdown(() => {
      for (const ws of this.sockets) {
        try {
          ws.end(1001, 'server shutting down')
        } catch {
          /* already gone */
        }
      }
    })
  }

  /** Streams interaction `id` as SSE on `ctx` (also the REST read's `?stream=true`). */
  async sse(ctx: Context, id: string, after: number): Promise<void> {
    ctx.watchAbort()
    const { session, record } = await this.open(id, credentialHeaders(ctx.headers, ctx.query), after)
    if (ctx.aborted) {
      session.stop()
      return
    }
    // an EventSource comes back after a second (not its default three) and resumes by Last-Event-ID
    const stream = ctx.sse({ maxQueuedBytes: this.maxBackpressure, retryMs: 1000 })
    stream.onClose(() => {
      session.stop()
    })
    session.start(new SseSink(stream), record)
  }

  /** Subscribes, then reads and checks access (in that order, so no step falls between the two). */
  private async open(
    id: string,
    headers: Record<string, string>,
    after: number
  ): Promise<{ session: StreamSession; record: Interaction }> {
    const session = new StreamSession(this.source.store, this.source.feed, id, after, this.limits)
    try {
      return { session, record: await this.source.readable(id, headers) }
    } catch (err) {
      session.stop()
      throw err
    }
  }

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const headers = requestHeaders(req)
    const query = new URLSearchParams(req.getQuery() ?? '')
    let aborted = false
    res.onAborted(() => {
      aborted = true
    })
    const answer = (err: unknown): void => {
      const e = isWireError(err) ? err : new PlatformError(HTTP_ERRORS.INTERNAL)
      if (!isWireError(err)) this.platform.logger.error({ err }, 'interaction stream upgrade failed')
      if (aborted) return
      res.cork(() => {
        res.writeStatus(statusLine(e.status))
        res.writeHeader('content-type', 'application/json')
        res.end(JSON.stringify(e.body()))
      })
    }
    let id: string
    let after: number
    try {
      const refused = this.platform.http.originRefusal(headers, req.getUrl())
      if (refused !== undefined) throw refused
      id = streamId(query)
      after = resumePoint(query, undefined)
    } catch (err) {
      answer(err)
      return
    }
    this.open(id, credentialHeaders(headers, query), after).then(({ session, record }) => {
      if (aborted || this.platform.http.isClosing) {
        session.stop()
        if (!aborted) answer(new PlatformError(HTTP_ERRORS.SHUTTING_DOWN))
        return
      }
      res.cork(() => {
        upgradeWith<WsData>(res, { session, record, sink: undefined }, headers, context)
      })
    }, answer)
  }
}

/** A WebSocket as a stream sink: one text frame per step. */
class WsSink implements StreamSink {
  /**
   * Open, batching or closed, in one field: it changes with the first batch, so the compiled send
   * path never assumed it constant. A `closed` flag of its own was first written when the first
   * stream of the process ended, which threw away the optimised code of every stream's send path.
   */
  private state = OPEN
  private waiter: (() => void) | undefined

  constructor(private readonly ws: WebSocket<WsData>) {}

  get closed(): boolean {
    return this.state === CLOSED
  }

  send(json: string): void {
    if (this.state === CLOSED) return
    // corked here, so the bytes are handed on (or counted as buffered) before send returns
    let status = 1
    if (this.state === BATCHING) status = this.ws.send(json, false)
    else
      this.ws.cork(() => {
        status = this.ws.send(json, false)
      })
    // 2: uWS dropped the frame at its cap; closing lets the client resume rather than miss a step
    if (status === 2) this.close(true)
  }

  buffered(): number {
    return this.state === CLOSED ? 0 : this.ws.getBufferedAmount()
  }

  batch(fn: () => void): void {
    if (this.state === CLOSED) return
    this.state = BATCHING
    try {
      this.ws.cork(fn)
    } finally {
      // a send inside may have closed it
      if (this.state === BATCHING) this.state = OPEN
    }
  }

  drained(ms: number): Promise<boolean> {
    return waitFor(this, ms, (fn) => (this.waiter = fn))
  }

  wake(): void {
    if (this.buffered() > LOW_WATER) return
    const w = this.waiter
    this.waiter = undefined
    w?.()
  }

  close(slow = false): void {
    if (this.state === CLOSED) return
    // uWS runs the close handler synchronously, which marks this sink ended
    if (slow) this.ws.end(1008, 'slow consumer')
    else this.ws.end(1000, 'interaction ended')
  }

  ended(): void {
    this.state = CLOSED
    const w = this.waiter
    this.waiter = undefined
    w?.()
  }
}

/** An SSE response as a stream sink: each step's seq is its event id, so EventSource resumes by itself. */
class SseSink implements StreamSink {
  constructor(private readonly stream: SseStream) {}

  get closed(): boolean {
    return this.stream.closed
  }

  send(json: string, seq?: number): void {
    this.stream.send(seq === undefined ? { data: json } : { id: seq, data: json })
  }

  buffered(): number {
    return this.stream.bufferedBytes
  }

  batch(fn: () => void): void {
    fn()
  }

  drained(ms: number): Promise<boolean> {
    return waitFor(this, ms, (fn) => this.stream.onDrain(fn))
  }

  close(): void {
    this.stream.close()
  }
}

/** Resolves when `register`'s callback runs with nothing buffered (true) or the sink closed or `ms` passed (false). */
function waitFor(sink: StreamSink, ms: number, register: (fn: () => void) => void): Promise<boolean> {
  if (sink.closed) return Promise.resolve(false)
  if (sink.buffered() <= LOW_WATER) return Promise.resolve(true)
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms)
    register(() => {
      clearTimeout(t)
      resolve(!sink.closed)
    })
  })
}
