/**
 * The admin event stream at /platform/admin/events, on WebSocket and SSE: every platform event of
 * the admin types as `{type, ...fields, timestamp, seq}`. Events are numbered as they happen, kept
 * in a bounded ring for replay, and sent in batches (every `platform.admin.events.batch-ms`, or
 * once per event-loop turn at 0): each event is serialised once, each subscriber gets one frame
 * (WebSocket) or one write (SSE) per batch, so a busy data path costs the stream one send per
 * subscriber per batch, not one per event.
 */
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket } from 'uWebSockets.js'
import type { Platform } from '../platform.js'
import type { EventType, PlatformEvent } from '../events/index.js'
import { SseStream, requestHeaders, statusLine, upgradeWith, type Context } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { ReadGate, type Principal } from '../auth/index.js'
import { eventJson, writeEventJson } from './event-json.js'
import { HTTP_ERRORS } from '../http/index.js'

export const EVENTS_PATH = '/platform/admin/events'
const HARD_BACKPRESSURE_BYTES = 64 * 1024 * 1024
/** How long the stream stays watched after its last subscriber leaves: a reconnect's `after` gap. */
export const LINGER_MS = 60_000

/** The types the stream carries (PluginsChanged is internal plumbing, not an admin event). */
export const STREAM_TYPES: readonly EventType[] = [
  'ResourceConnected',
  'ResourceDisconnected',
  'BroadcasterCreated',
  'BroadcasterDestroyed',
  'MessageBroadcast',
  'AgentSessionStarted',
  'AgentSessionEnded',
  'TaskStateChanged',
  'AgentDispatched',
  'AgentCompleted',
  'TurnCompleted',
  'ControlActionExecuted'
]

interface Numbered {
  seq: number
  json: string
}

type Subscriber = { ws: WebSocket<WsSub> } | { sse: SseStream }

interface WsSub {
  after: number | undefined
  closed: boolean
  sub?: Subscriber
}

/**
 * The last `capacity` events, oldest first, in two flat arrays (no object per event): the bus's
 * events themselves, serialised only when a replay asks for them (then kept as JSON).
 */
class Ring {
  private readonly seqs: number[]
  private readonly items: (string | PlatformEvent)[]
  private next = 0
  size = 0

  constructor(readonly capacity: number) {
    this.seqs = new Array<number>(capacity).fill(0)
    this.items = new Array<string | PlatformEvent>(capacity).fill('')
  }

  push(seq: number, item: string | PlatformEvent): void {
    if (this.capacity === 0) return
    this.seqs[this.next] = seq
    this.items[this.next] = item
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1
    if (this.size < this.capacity) this.size++
  }

  /** Kept events with seq > after, oldest first. */
  since(after: number): Numbered[] {
    const out: Numbered[] = []
    const start = (this.next - this.size + this.capacity) % Math.max(1, this.capacity)
    for (let i = 0; i < this.size; i++) {
      const k = (start + i) % this.capacity
      const seq = this.seqs[k]!
      if (seq <= after) continue
      let item = this.items[k]!
      if (typeof item !== 'string') this.items[k] = item = eventJson(item, seq)
      out.push({ seq, json: item })
    }
    return out
  }
}

/**
 * One WebSocket message per event (clients read one event object a message, as in docs/admin.md): the
 * batch is serialised once into one buffer, and each event's message is a view of it.
 */
function wsFrames(first: number, batch: readonly PlatformEvent[]): Buffer[] {
  const out: string[] = []
  const ends: number[] = []
  let length = 0
  for (let i = 0; i < batch.length; i++) {
    const from = out.length
    writeEventJson(out, batch[i]!, first + i)
    for (let j = from; j < out.length; j++) length += Buffer.byteLength(out[j]!)
    ends.push(length)
  }
  const all = Buffer.from(out.join(''))
  return ends.map((end, i) => all.subarray(i === 0 ? 0 : ends[i - 1]!, end))
}

/** SSE frames of a batch from seq `first`, `id:` = seq (event JSON holds no newline: one `data:` line each). */
function sseBatch(first: number, batch: readonly PlatformEvent[]): Buffer {
  const out: string[] = []
  for (let i = 0; i < batch.length; i++) {
    out.push('id: ', String(first + i), '\ndata: ')
    writeEventJson(out, batch[i]!, first + i)
    out.push('\n\n')
  }
  return Buffer.from(out.join(''))
}

/** `?after=` or `Last-Event-ID`: a non-negative integer, or undefined (then the replay window). */
function parseAfter(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined
  if (!/^\d{1,15}$/.test(raw))
    throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: 'after', detail: 'must be an integer' })
  return Number(raw)
}

export interface EventStreamOptions {
  replay: number
  /** Bytes a subscriber may leave unread before it is closed as a slow consumer. */
  maxBackpressureBytes: number
  idleTimeoutSeconds: number
  /** Events are sent at most this often (0: once per event-loop turn). */
  batchMs: number
}

export class AdminEventStream {
  private seq = 0
  private pending: PlatformEvent[] = []
  private firstPendingSeq = 1
  private scheduled = false
  private readonly ring: Ring
  private readonly subscribers = new Set<Subscriber>()
  private readonly unsubscribe: (() => void)[] = []
  private readonly reads: ReadGate
  private lingering: ReturnType<typeof setTimeout> | undefined
  private stopped = false

  constructor(
    private readonly platform: Platform,
    private readonly opts: EventStreamOptions
  ) {
    this.ring = new Ring(opts.replay)
    this.reads = new ReadGate(platform.config, platform.principals)
    for (const type of STREAM_TYPES) this.unsubscribe.push(platform.bus.on(type, (e) => this.take(e)))
  }

  /**
   * True while someone subscribes, and for LINGER_MS after the last one left so a client that
   * reconnects with `after` misses nothing: producers whose events cost them something (a
   * governance decision per policy per turn) check this before building one.
   */
  get watched(): boolean {
    return this.subscribers.size > 0 || this.lingering !== undefined
  }

  private add(sub: Subscriber): void {
    this.subscribers.add(sub)
    if (this.lingering === undefined) return
    clearTimeout(this.lingering)
    this.lingering = undefined
  }

  private drop(sub: Subscriber): void {
    if (!this.subscribers.delete(sub) || this.subscribers.size > 0 || this.stopped) return
    this.lingering = setTimeout(() => {
      this.lingering = undefined
    }, LINGER_MS).unref()
  }

  /** Numbers an event and queues it for the next batch (bus events come here; so do decisions). */
  take(event: PlatformEvent): void {
    if (this.pending.length === 0) this.firstPendingSeq = this.seq + 1
    this.seq++
    this.pending.push(event)
    if (!this.scheduled) {
      this.scheduled = true
      if (this.opts.batchMs === 0) setImmediate(this.flushNow)
      else setTimeout(this.flushNow, this.opts.batchMs).unref()
    }
  }

  private readonly flushNow = (): void => {
    this.flush()
  }

  /**
   * Once per batch: keep the batch's events, serialise them once per protocol in use, and send
   * the same bytes to every subscriber: one frame per WebSocket (one Buffer for all), one write per
   * SSE stream. The ring keeps the events themselves: it serialises one only if a replay asks.
   */
  flush(): void {
    this.scheduled = false
    const batch = this.pending
    if (batch.length === 0) return
    this.pending = []
    const first = this.firstPendingSeq
    for (let i = Math.max(0, batch.length - this.ring.capacity); i < batch.length; i++)
      this.ring.push(first + i, batch[i]!)
    if (this.subscribers.size === 0) return
    let ws: Buffer[] | undefined
    let sse: Buffer | undefined
    for (const s of this.subscribers) {
      if ('ws' in s) this.sendWs(s.ws, (ws ??= wsFrames(first, batch)))
      else s.sse.sendFrames((sse ??= sseBatch(first, batch)))
    }
  }

  private sendWs(ws: WebSocket<WsSub>, frames: readonly Buffer[]): void {
    const d = ws.getUserData()
    if (d.closed) return
    // one message per event, batched only as one corked write; a consumer that lets the limit pile
    // up is behind for good, close it (what stays buffered is at most the limit plus one batch)
    let dropped = false
    ws.cork(() => {
      for (const f of frames) if (ws.send(f, false) === 2) dropped = true
    })
    if (dropped || ws.getBufferedAmount() > this.opts.maxBackpressureBytes) {
      d.closed = true
      this.platform.logger.warn(
        { bufferedAmount: ws.getBufferedAmount() },
        'closing slow admin event subscriber (1008)'
      )
      ws.end(1008, 'slow consumer')
    }
  }

  /** The caller of a stream request: header credentials or `access_token`, through the content read gate. */
  private authorise(headers: Record<string, string>, query: URLSearchParams): Principal | null {
    const token = query.get('access_token')
    const creds = token !== null && token !== '' ? { ...headers, authorization: `Bearer ${token}` } : headers
    const principal = this.platform.principals.fromHeaders(creds)
    this.reads.checkPrincipal(principal, 'content')
    return principal
  }

  install(): void {
    const { http } = this.platform
    const sockets = new Set<WebSocket<WsSub>>()
    http.ws<WsSub>(EVENTS_PATH, {
      idleTimeout: this.opts.idleTimeoutSeconds,
      maxPayloadLength: 1024,
      // uWS's own cap only stops a runaway turn; sendWs closes at the configured limit
      maxBackpressure: HARD_BACKPRESSURE_BYTES,
      upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
        const headers = requestHeaders(req)
        const query = new URLSearchParams(req.getQuery() ?? '')
        let after: number | undefined
        try {
          this.authorise(headers, query)
          after = parseAfter(query.get('after'))
        } catch (err) {
          const e = isWireError(err) ? err : new PlatformError(HTTP_ERRORS.INTERNAL)
          res.cork(() => {
            res.writeStatus(statusLine(e.status)).writeHeader('content-type', 'application/json')
            res.end(JSON.stringify(e.body()))
          })
          return
        }
        res.cork(() => {
          upgradeWith<WsSub>(res, { after, closed: false }, headers, context)
        })
      },
      open: (ws) => {
        sockets.add(ws)
        const d = ws.getUserData()
        const replay = this.replayFor(d.after)
        if (replay.length > 0)
          this.sendWs(
            ws,
            replay.map((n) => Buffer.from(n.json))
          )
        if (d.closed) return
        d.sub = { ws }
        this.add(d.sub)
      },
      // the stream is one-way: frames from the client are ignored
      message: () => {},
      close: (ws) => {
        sockets.delete(ws)
        const d = ws.getUserData()
        d.closed = true
        if (d.sub !== undefined) this.drop(d.sub)
      }
    })
    http.get(EVENTS_PATH, (ctx: Context) => {
      this.authorise(ctx.headers, ctx.query)
      const after = parseAfter(ctx.query.get('after') ?? ctx.header('last-event-id'))
      // heartbeat comments come from the server's shared timer for every open SSE stream
      const stream = ctx.sse({ maxQueuedBytes: this.opts.maxBackpressureBytes })
      const replay = this.replayFor(after)
      if (replay.length > 0) stream.sendFrames(replay.map((n) => SseStream.frame({ id: n.seq, data: n.json })).join(''))
      if (stream.closed) return undefined
      const sub = { sse: stream }
      this.add(sub)
      stream.onClose(() => this.drop(sub))
      return undefined
    })
    http.onShutdown(() => {
      this.stopped = true
      clearTimeout(this.lingering)
      this.lingering = undefined
      for (const off of this.unsubscribe.splice(0)) off()
      for (const ws of sockets) {
        try {
          ws.end(1001, 'server shutting down')
        } catch {
          /* already gone */
        }
      }
    })
  }

  /**
   * What a new subscriber is owed: after `after` when given, else the replay window. An `after`
   * beyond the last seq comes from before a restart (numbering starts again): the window then.
   */
  private replayFor(after: number | undefined): Numbered[] {
    this.flush()
    if (after === undefined || after > this.seq) return this.ring.since(0)
    return this.ring.since(after)
  }
}

export function installEventStream(platform: Platform): AdminEventStream {
  const c = platform.config
  const stream = new AdminEventStream(platform, {
    replay: c.get('platform.admin.events.replay'),
    maxBackpressureBytes: c.get('platform.transport.max-backpressure-bytes'),
    idleTimeoutSeconds: Math.min(960, Math.max(8, c.get('platform.transport.heartbeat-seconds') * 2)),
    batchMs: c.get('platform.admin.events.batch-ms')
  })
  stream.install()
  return stream
}
