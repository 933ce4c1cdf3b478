/**
 * The admin event stream at /platform/admin/events, on WebSocket and SSE: every platform event of
 * the admin types as `{type, ...fields, timestamp, node, seq}`, of every node of a cluster. Each
 * node numbers its own events as they happen (`seq`); the events of all nodes are kept
 * in a bounded ring for replay, and sent in batches (every `platform.admin.events.batch-ms`, or
 * once per event-loop turn at 0): each event is serialised once; WebSocket subscribers get one
 * message per event, a batch's messages in one corked run per subscriber, SSE subscribers one
 * write per batch, so a busy data path costs the stream a socket write per subscriber per batch
 * (per 16 KiB of it), not one per event.
 */
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket } from 'uWebSockets.js'
import type { Platform } from '../platform.js'
import type { EventType, PlatformEvent } from '../events/index.js'
import { SseStream, requestHeaders, statusLine, upgradeWith, type Context } from '../http/index.js'
import { BACKPLANE, NODE_ID, PlatformError, isWireError, type Backplane } from '../contracts/index.js'
import { ReadGate, type Principal } from '../auth/index.js'
import { sseBatch, wsFrames, type Batch, type FrameScratch } from './event-json.js'
import { HTTP_ERRORS } from '../http/index.js'
import { Ring, formatCursor, parseCursor, type Cursor, type Numbered } from './event-ring.js'
import { EVENTS_TOPIC, remoteBatchOf, type RemoteBatch } from './remote-events.js'

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

/** What another node's batch may carry: the stream types and the governance decisions. */
const REMOTE_TYPES: ReadonlySet<string> = new Set<string>([...STREAM_TYPES, 'GovernanceDecision'])

type Subscriber = { ws: WebSocket<WsSub> } | { sse: SseStream }

interface WsSub {
  after: Cursor | undefined
  closed: boolean
  sub?: Subscriber
}

export interface EventStreamOptions {
  replay: number
  /** Bytes a subscriber may leave unread before it is closed as a slow consumer. */
  maxBackpressureBytes: number
  idleTimeoutSeconds: number
  /** Events are sent at most this often (0: once per event-loop turn). */
  batchMs: number
  /** This node: the `node` of its own events. */
  node: string
  /** The backplane to the other nodes of a cluster; undefined on a node alone. */
  backplane: Backplane | undefined
  /** Whether another node's stream is watched (its heartbeat says so). */
  watchedElsewhere: () => boolean
}

export class AdminEventStream {
  /** The seq of this node's last own event. */
  private seq = 0
  /** The next batch, in stream order: each event with its node and seq. */
  private pending: Batch & { events: PlatformEvent[]; nodes: string[]; seqs: number[] } = {
    events: [],
    nodes: [],
    seqs: []
  }
  /** This node's own events of the next batch, for the other nodes (they number from `ownFirst`). */
  private own: PlatformEvent[] = []
  private ownFirst = 1
  /** Per node, the last seq streamed: the position a cluster's SSE `id:` names. */
  private readonly position: Cursor = new Map()
  private scheduled = false
  private readonly ring: Ring
  private readonly subscribers = new Set<Subscriber>()
  /** WebSocket subscribers, each added once its replay is sent. */
  private readonly wsSubscribers = new Set<WebSocket<WsSub>>()
  /** What each batch's WebSocket messages are written into, kept from one batch to the next. */
  private readonly frameScratch: FrameScratch = { buf: undefined }
  private readonly unsubscribe: (() => void)[] = []
  private readonly reads: ReadGate
  private lingering: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  /**
   * Only this node's own restart is known for sure (its seq is below the cursor's). Another node's
   * seq beyond what this node heard of it is taken as not heard yet (a resume racing the backplane),
   * so its kept events, all older, are not sent again.
   */
  private readonly restarted = (node: string, seq: number): boolean => node === this.opts.node && seq > this.seq

  constructor(
    private readonly platform: Platform,
    private readonly opts: EventStreamOptions
  ) {
    this.ring = new Ring(opts.replay)
    this.reads = new ReadGate(platform.config, platform.principals)
    for (const type of STREAM_TYPES) this.unsubscribe.push(platform.bus.on(type, (e) => this.take(e)))
    if (opts.backplane !== undefined)
      this.unsubscribe.push(
        opts.backplane.subscribe(EVENTS_TOPIC, (data, from) => {
          this.takeRemote(data, from)
        })
      )
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

  /** Numbers an event of this node and queues it for the next batch (bus events come here; so do decisions). */
  take(event: PlatformEvent): void {
    this.seq++
    if (this.opts.backplane !== undefined) {
      if (this.own.length === 0) this.ownFirst = this.seq
      this.own.push(event)
    } else if (this.subscribers.size === 0 && this.pending.events.length === 0) {
      // a node alone with nobody subscribed: straight into the replay window, no batch and no
      // timer (a batch still pending goes first, so the window keeps the order)
      this.ring.push(this.opts.node, this.seq, event)
      return
    }
    this.queue(event, this.opts.node, this.seq)
  }

  /** Another node's batch of its own events: streamed here in the order it arrives, with their node and seqs. */
  private takeRemote(data: unknown, from: string): void {
    if (!NODE_ID.test(from) || from === this.opts.node) return
    const batch = remoteBatchOf(data, REMOTE_TYPES)
    if (batch === undefined) return
    const { first, events } = batch
    for (let i = 0; i < events.length; i++) if (events[i] !== undefined) this.queue(events[i]!, from, first + i)
  }

  private queue(event: PlatformEvent, node: string, seq: number): void {
    this.pending.events.push(event)
    this.pending.nodes.push(node)
    this.pending.seqs.push(seq)
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
   * the same bytes to every subscriber: to each WebSocket a message per event, corked, all views of
   * one Buffer; one write per SSE stream. The ring keeps the events themselves: it serialises one
   * only if a replay asks. This node's own events also go to the other nodes, while a stream
   * anywhere is watched.
   */
  flush(): void {
    this.scheduled = false
    this.publishOwn()
    const batch = this.pending
    const n = batch.events.length
    if (n === 0) return
    this.pending = { events: [], nodes: [], seqs: [] }
    for (let i = Math.max(0, n - this.ring.capacity); i < n; i++)
      this.ring.push(batch.nodes[i]!, batch.seqs[i]!, batch.events[i]!)
    // the cursor each SSE event ends at, in a cluster; a node alone keeps its plain seq as `id:`
    let ids: string[] | undefined
    if (this.opts.backplane !== undefined) {
      ids = []
      for (let i = 0; i < n; i++) {
        this.position.set(batch.nodes[i]!, batch.seqs[i]!)
        ids.push(formatCursor(this.position))
      }
    }
    if (this.subscribers.size === 0) return
    if (this.wsSubscribers.size > 0) {
      const frames = wsFrames(batch, this.frameScratch)
      for (const ws of this.wsSubscribers) this.sendWs(ws, frames)
    }
    if (this.wsSubscribers.size === this.subscribers.size) return
    let sse: Buffer | undefined
    for (const s of this.subscribers)
      if ('sse' in s) s.sse.sendFrames((sse ??= sseBatch(batch, ids ?? batch.seqs.map(String))))
  }

  /** This node's events of the batch to the other nodes: not while no stream anywhere is watched. */
  private publishOwn(): void {
    const own = this.own
    if (own.length === 0) return
    this.own = []
    if (this.opts.backplane === undefined || !(this.watched || this.opts.watchedElsewhere())) return
    this.opts.backplane.publish(EVENTS_TOPIC, { f: this.ownFirst, e: own } satisfies RemoteBatch)
  }

  /**
   * A replay or a live batch: one message per event, batched only as one corked write. Not a uWS
   * topic publish per event: it saves the call per message per subscriber, but uWS drains a topic
   * to each subscriber every 32 messages, a socket write per 32 events where a corked run writes
   * once per 16 KiB it fills; the extra writes cost more than the calls saved (about 1.25x the CPU
   * per event per subscriber, measured with 50 subscribers and 175-byte events).
   */
  private sendWs(ws: WebSocket<WsSub>, frames: readonly Buffer[]): void {
    let dropped = false
    ws.cork(() => {
      for (const f of frames) if (ws.send(f, false) === 2) dropped = true
    })
    this.closeIfBehind(ws, dropped)
  }

  /**
   * A consumer that lets the limit pile up is behind for good: close it (what stays buffered is at
   * most the limit plus one batch). Dropped from the subscribers first, so no later batch reaches
   * a closing socket.
   */
  private closeIfBehind(ws: WebSocket<WsSub>, dropped: boolean): void {
    if (!dropped && ws.getBufferedAmount() <= this.opts.maxBackpressureBytes) return
    const d = ws.getUserData()
    d.closed = true
    this.wsSubscribers.delete(ws)
    this.platform.logger.warn({ bufferedAmount: ws.getBufferedAmount() }, 'closing slow admin event subscriber (1008)')
    ws.end(1008, 'slow consumer')
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
        let after: Cursor | undefined
        try {
          this.authorise(headers, query)
          after = parseCursor(query.get('after'), this.opts.node)
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
        this.wsSubscribers.add(ws)
        this.add(d.sub)
      },
      // the stream is one-way: frames from the client are ignored
      message: () => {},
      close: (ws) => {
        sockets.delete(ws)
        const d = ws.getUserData()
        d.closed = true
        this.wsSubscribers.delete(ws)
        if (d.sub !== undefined) this.drop(d.sub)
      }
    })
    http.get(EVENTS_PATH, (ctx: Context) => {
      this.authorise(ctx.headers, ctx.query)
      const after = parseCursor(ctx.query.get('after') ?? ctx.header('last-event-id'), this.opts.node)
      // heartbeat comments come from the server's shared timer for every open SSE stream
      const stream = ctx.sse({ maxQueuedBytes: this.opts.maxBackpressureBytes })
      const replay = this.replayFor(after)
      if (replay.length > 0) stream.sendFrames(this.replayFrames(replay, after))
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
   * What a new subscriber is owed: of each node, the kept events after the cursor's seq for it,
   * else the replay window. A seq of this node beyond its last comes from before it restarted
   * (numbering starts again): all of its kept events then.
   */
  private replayFor(after: Cursor | undefined): Numbered[] {
    this.flush()
    return this.ring.since(after, this.restarted)
  }

  /** A replay as SSE frames: in a cluster each `id:` is the cursor that event ends at, from the subscriber's own. */
  private replayFrames(replay: readonly Numbered[], after: Cursor | undefined): string {
    if (this.opts.backplane === undefined)
      return replay.map((n) => SseStream.frame({ id: n.seq, data: n.json })).join('')
    const at: Cursor = new Map(after)
    return replay
      .map((n) => {
        at.set(n.node, n.seq)
        return SseStream.frame({ id: formatCursor(at), data: n.json })
      })
      .join('')
  }
}

export function installEventStream(platform: Platform, watchedElsewhere: () => boolean): AdminEventStream {
  const c = platform.config
  const stream = new AdminEventStream(platform, {
    replay: c.get('platform.admin.events.replay'),
    maxBackpressureBytes: c.get('platform.transport.max-backpressure-bytes'),
    idleTimeoutSeconds: Math.min(960, Math.max(8, c.get('platform.transport.heartbeat-seconds') * 2)),
    batchMs: c.get('platform.admin.events.batch-ms'),
    node: platform.node.id,
    // only a backplane the cluster area (or an embedding application) added: a node alone publishes nothing
    backplane: platform.extensions(BACKPLANE)[0],
    watchedElsewhere
  })
  stream.install()
  return stream
}
