import type { TemplatedApp } from 'uWebSockets.js'
import type { Logger } from '../observability/index.js'
import type { Metrics } from '../observability/index.js'
import type { EventBus } from '../events/index.js'
import { PlatformError } from '../contracts/index.js'
import { Broadcaster, type Resource, type SocketMember } from './broadcaster.js'
import { Frame } from './frame.js'
import { WsResource, type SocketWatcher } from './ws-resource.js'
import { LongPollingResource, type PollOwner } from './long-polling-resource.js'
import { PollCacheMetrics } from './poll-cache-metrics.js'
import { Reason, type BroadcasterInfo, type ResourceInfo } from './types.js'
import { Endpoint } from './endpoint.js'
import type { EndpointHooks } from './endpoint-hooks.js'
import type { EndpointSettings } from './endpoint-settings.js'
import { TRANSPORT_ERRORS } from './errors.js'
import { ClusterRelay } from './cluster-relay.js'
import type { Backplane } from '../contracts/index.js'

export interface TransportOptions {
  app: TemplatedApp
  logger: Logger
  metrics: Metrics
  bus: EventBus
  /** A WebSocket buffering more than this is closed with 1008. */
  maxBackpressureBytes: number
  longPollingTimeoutMs: number
  longPollingQueue: number
  longPollingIdleMs: number
  /** The backplane to the other nodes of a cluster; undefined on a node alone. */
  backplane: () => Backplane | undefined
}

const GAUGE_LABEL = { WEBSOCKET: 'websocket', SSE: 'sse', LONG_POLLING: 'long-polling' } as const
/** Rooms share one metrics label: a label per room would grow without bound. */
const ROOM_LABEL = 'rooms'

/**
 * Broadcasters and connected resources. A broadcast is serialised once, published once to the
 * broadcaster's uWS topic (every WebSocket member) and written to each SSE / long-polling member.
 * WebSocket backpressure is checked once per event-loop turn for the broadcasters that published
 * in it; uWS itself drops frames beyond twice the limit, so nothing buffers without bound.
 */
export class Transport implements SocketWatcher, PollOwner {
  private readonly broadcasters = new Map<string, Broadcaster>()
  private readonly resources = new Map<string, Resource>()
  private readonly polling = new Set<LongPollingResource>()
  // what changes after install is in #private fields: platform.provide freezes the transport
  #dirty = new Set<Broadcaster>()
  #flushes = new Set<LongPollingResource>()
  #turnScheduled = false
  #sweeper: NodeJS.Timeout | undefined
  private readonly runTurn = (): void => {
    this.turn()
  }
  // private, so the frozen service (platform.provide) still shuts down; others read `closing`
  #closing = false
  get closing(): boolean {
    return this.#closing
  }
  /** Set by installTransport: what `expose` needs to serve an endpoint. */
  endpointSettings: EndpointSettings | undefined
  /** The endpoints served on the three transports, in installation order (the admin `handlers`). */
  readonly handlers: { path: string; className: string }[] = []

  /** The long-polling message cache's counters (PollOwner). */
  readonly pollCache: PollCacheMetrics

  /** Broadcasts of clustered broadcasters (rooms) to and from the other nodes. */
  readonly relay: ClusterRelay

  constructor(readonly opts: TransportOptions) {
    this.pollCache = new PollCacheMetrics(opts.metrics.registry)
    this.relay = new ClusterRelay(opts.backplane, (b, frame) => {
      this.deliver(b, frame)
    })
  }

  /**
   * Serves `pattern` (`/things/{id}`) on WebSocket, SSE and long-polling: each connection becomes
   * a resource of the broadcaster `hooks.resolve` names, with the same heartbeats, slow-consumer
   * closing and shutdown as rooms. For areas that stream to clients (admin events, live streams).
   */
  expose(pattern: string, hooks: EndpointHooks): void {
    if (this.endpointSettings === undefined)
      throw new Error('transport not installed: call installTransport(platform) first')
    new Endpoint(this.endpointSettings, pattern, hooks).install()
  }

  // --- programmatic API (the admin area puts REST on these) ---

  /** Gets or creates the broadcaster `id`. */
  broadcaster(id: string, className: string = 'Broadcaster'): Broadcaster {
    let b = this.broadcasters.get(id)
    if (b === undefined) {
      // broadcasters an endpoint creates per request share their class's label, so labels stay bounded
      const label = className === 'RoomBroadcaster' ? ROOM_LABEL : className === 'Broadcaster' ? id : className
      b = new Broadcaster(id, className, this.opts.metrics.broadcasts.labels(label))
      if (this.endpointSettings !== undefined) b.frameLimit = this.endpointSettings.frameLimit
      this.broadcasters.set(id, b)
      this.opts.bus.emit('BroadcasterCreated', { id })
    }
    return b
  }

  findBroadcaster(id: string): Broadcaster | undefined {
    return this.broadcasters.get(id)
  }

  /** Disconnects every member and forgets the broadcaster; false when there is none. */
  destroyBroadcaster(id: string): boolean {
    const b = this.broadcasters.get(id)
    if (b === undefined) return false
    b.destroyed = true
    for (const r of [...b.resources.values()]) this.end(r, Reason.destroyed)
    this.relay.leave(b)
    this.broadcasters.delete(id)
    this.opts.bus.emit('BroadcasterDestroyed', { id })
    return true
  }

  /** Sends `message` (a string as is, anything else as JSON) to every member; returns how many. */
  broadcast(broadcasterId: string, message: unknown): number {
    const b = this.broadcasters.get(broadcasterId)
    if (b === undefined || b.destroyed)
      throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_BROADCASTER, { id: broadcasterId })
    if (message === undefined) throw new PlatformError(TRANSPORT_ERRORS.MISSING_BROADCAST_FIELDS)
    return this.publish(b, Frame.of(message))
  }

  /** Sends `message` to one resource; false when the uuid is unknown. */
  unicast(uuid: string, message: unknown): boolean {
    const r = this.resources.get(uuid)
    if (r === undefined || message === undefined) return false
    r.deliver(Frame.of(message))
    return true
  }

  /** Closes the resource `uuid` from the server side; false when it is unknown. */
  disconnect(uuid: string, reason: Reason = Reason.disconnected): boolean {
    const r = this.resources.get(uuid)
    if (r === undefined) return false
    this.end(r, reason)
    return true
  }

  resource(uuid: string): Resource | undefined {
    return this.resources.get(uuid)
  }

  listBroadcasters(): BroadcasterInfo[] {
    return [...this.broadcasters.values()].map((b) => b.info())
  }

  listResources(broadcasterId?: string): ResourceInfo[] {
    const src =
      broadcasterId === undefined
        ? this.resources.values()
        : (this.broadcasters.get(broadcasterId)?.resources.values() ?? [])
    return [...src].map((r) => r.info())
  }

  get resourceCount(): number {
    return this.resources.size
  }

  get broadcasterCount(): number {
    return this.broadcasters.size
  }

  // --- delivery ---

  /**
   * Publishes one serialised frame to `b`, optionally not to `except`; returns the recipients on
   * this node. Local members first, then, for a clustered broadcaster, the other nodes' members
   * through the backplane (`except` is a local member: the other nodes deliver to all of theirs).
   */
  publish(b: Broadcaster, frame: Frame, except?: Resource): number {
    const count = this.deliver(b, frame, except)
    if (b.clustered) this.relay.send(b, frame)
    return count
  }

  /** Delivers a frame to the members `b` has on this node only. */
  private deliver(b: Broadcaster, frame: Frame, except?: Resource): number {
    const started = performance.now()
    if (b.sockets.size > 0) {
      if (except instanceof WsResource && !except.closed) except.ws.publish(b.topic, frame.text, false)
      else this.opts.app.publish(b.topic, frame.text, false)
      this.#dirty.add(b)
      this.scheduleTurn()
    }
    for (const r of b.direct) if (r !== except) r.deliver(frame)
    const count = b.resources.size - (except !== undefined && b.resources.has(except.uuid) ? 1 : 0)
    b.counter.inc()
    if (count > 0) this.opts.metrics.deliveries.inc(count)
    this.opts.metrics.broadcastLatency.observe((performance.now() - started) / 1000)
    this.opts.bus.emit('MessageBroadcast', { broadcasterId: b.id, resourceCount: count })
    return count
  }

  // --- registration ---

  add(r: Resource): void {
    const b = r.broadcaster
    this.resources.set(r.uuid, r)
    b.resources.set(r.uuid, r)
    if (r instanceof WsResource) {
      b.sockets.add(r)
      r.ws.subscribe(b.topic)
    } else {
      b.direct.add(r)
      if (r instanceof LongPollingResource) {
        this.polling.add(r)
        this.startSweeper()
      }
    }
    if (b.resources.size === 1) this.relay.join(b)
    if (r.transport !== 'SSE') this.opts.metrics.openConnections.inc({ transport: GAUGE_LABEL[r.transport] })
    this.opts.metrics.resourcesConnected.inc()
    this.opts.bus.emit('ResourceConnected', { uuid: r.uuid, transport: r.transport, broadcaster: b.id })
  }

  /** Forgets a resource whose connection is gone; idempotent. */
  remove(r: Resource, reason: Reason): void {
    if (r.closed) return
    r.closed = true
    r.slot?.release()
    const b = r.broadcaster
    this.resources.delete(r.uuid)
    b.resources.delete(r.uuid)
    if (r instanceof WsResource) b.sockets.delete(r)
    else b.direct.delete(r)
    // after a leave announcement, below: it still goes to the other nodes while this one listens
    const last = b.resources.size === 0
    if (r instanceof LongPollingResource) {
      this.polling.delete(r)
      this.#flushes.delete(r)
    }
    // the SSE gauge is kept by the HTTP core's stream bookkeeping
    if (r.transport !== 'SSE') this.opts.metrics.openConnections.dec({ transport: GAUGE_LABEL[r.transport] })
    this.opts.metrics.resourcesDisconnected.inc()
    this.opts.bus.emit('ResourceDisconnected', { uuid: r.uuid, reason })
    if (b.destroyed || this.#closing) {
      if (last) this.relay.leave(b)
      return
    }
    if (b.onLeave !== undefined) {
      try {
        b.onLeave(r, reason)
      } catch (err) {
        this.opts.logger.error({ err, broadcaster: b.id }, 'leave handler failed')
      }
    }
    if (last) this.relay.leave(b)
    if (b.autoDestroy && b.resources.size === 0 && this.broadcasters.get(b.id) === b) this.destroyBroadcaster(b.id)
  }

  /** Ends a resource from the server side and unregisters it. */
  end(r: Resource, reason: Reason): void {
    if (r.closed) return
    try {
      r.end(reason)
    } catch (err) {
      this.opts.logger.warn({ err, uuid: r.uuid }, 'ending resource failed')
    }
    this.remove(r, reason)
  }

  /** Graceful shutdown: WebSockets get 1001, SSE streams and held polls a `disconnected` frame. */
  shutdown(): void {
    this.#closing = true
    if (this.#sweeper !== undefined) {
      clearInterval(this.#sweeper)
      this.#sweeper = undefined
    }
    for (const r of [...this.resources.values()]) this.end(r, Reason.shutdown)
  }

  // --- backpressure (SocketWatcher) ---

  sent(r: WsResource, status: number): void {
    if (status === 2) this.opts.metrics.backpressureDrops.inc()
    if (status === 2 || r.ws.getBufferedAmount() > this.opts.maxBackpressureBytes) this.slow(r)
  }

  private slow(r: SocketMember): void {
    if (r.closed) return
    let buffered = -1
    try {
      buffered = r.ws.getBufferedAmount()
    } catch {
      /* closed meanwhile */
    }
    this.opts.metrics.slowConsumers.inc()
    this.opts.logger.warn(
      { uuid: r.uuid, broadcaster: r.broadcaster.id, bufferedAmount: buffered, limit: this.opts.maxBackpressureBytes },
      'closing slow WebSocket consumer (1008)'
    )
    this.end(r, Reason.slow)
  }

  // --- long-polling (PollOwner) ---

  scheduleFlush(r: LongPollingResource): void {
    this.#flushes.add(r)
    this.scheduleTurn()
  }

  overflow(r: LongPollingResource): void {
    this.opts.logger.warn(
      {
        uuid: r.uuid,
        broadcaster: r.broadcaster.id,
        maxFrames: this.opts.longPollingQueue,
        maxBytes: this.opts.maxBackpressureBytes
      },
      'disconnecting long-polling client: queue overflow'
    )
    this.end(r, Reason.queueOverflow)
  }

  // --- once per event-loop turn ---

  private scheduleTurn(): void {
    if (this.#turnScheduled) return
    this.#turnScheduled = true
    setImmediate(this.runTurn)
  }

  /** Batches what one turn produced: slow-consumer checks and long-poll answers. */
  private turn(): void {
    this.#turnScheduled = false
    if (this.#dirty.size > 0) {
      const list = this.#dirty
      this.#dirty = new Set()
      const limit = this.opts.maxBackpressureBytes
      for (const b of list) {
        for (const r of b.sockets) if (r.ws.getBufferedAmount() > limit) this.slow(r)
      }
    }
    if (this.#flushes.size > 0) {
      const list = this.#flushes
      this.#flushes = new Set()
      for (const r of list) r.answer()
    }
  }

  private startSweeper(): void {
    if (this.#sweeper !== undefined || this.#closing) return
    const period = Math.min(1000, this.opts.longPollingTimeoutMs)
    this.#sweeper = setInterval(() => {
      this.sweep()
    }, period)
    this.#sweeper.unref()
  }

  /** Answers polls whose timeout passed (empty) and disconnects clients that stopped polling. */
  private sweep(): void {
    if (this.polling.size === 0) {
      clearInterval(this.#sweeper)
      this.#sweeper = undefined
      return
    }
    const now = Date.now()
    for (const r of [...this.polling]) {
      if (r.expired(now)) r.answer()
      else if (r.idleSince(now, this.opts.longPollingIdleMs)) this.end(r, Reason.timeout)
    }
  }
}
