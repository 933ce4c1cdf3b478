import { Registry, Counter, Gauge, collectDefaultMetrics } from 'prom-client'
import { RouteMetrics } from './route-metrics.js'
import { TimedMetric } from './timed-metric.js'

/** One registry per platform instance, so tests can run several side by side. */
export class Metrics {
  readonly registry = new Registry()
  /** Request counts and durations by route pattern (never by raw URL). */
  readonly routes: RouteMetrics
  readonly openConnections: Gauge<'transport'>
  readonly broadcasts: Counter<'broadcaster'>
  readonly deliveries: Counter
  readonly slowConsumers: Counter
  /** How long one broadcast's fan-out call took (handing the frame to uWS and the direct resources). */
  readonly broadcastLatency: TimedMetric
  readonly backpressureDrops: Counter
  readonly resourcesConnected: Counter
  readonly resourcesDisconnected: Counter
  readonly pluginFailures: Counter<'plugin' | 'reason'>
  readonly storeWriteFailures: Counter<'log'>
  readonly anonymousDenied: Counter<'log' | 'outcome'>

  constructor() {
    collectDefaultMetrics({ register: this.registry })
    const registers = [this.registry]
    this.routes = new RouteMetrics(this.registry)
    this.openConnections = new Gauge({
      name: 'platform_open_connections',
      help: 'Open WebSocket, SSE and long-polling connections',
      labelNames: ['transport'],
      registers
    })
    this.broadcasts = new Counter({
      name: 'platform_broadcasts_total',
      help: 'Messages broadcast, by broadcaster',
      labelNames: ['broadcaster'],
      registers
    })
    this.deliveries = new Counter({
      name: 'platform_broadcast_deliveries_total',
      help: 'Broadcast messages handed to connected resources',
      registers
    })
    this.slowConsumers = new Counter({
      name: 'platform_slow_consumers_closed_total',
      help: 'WebSocket consumers closed for exceeding the backpressure limit',
      registers
    })
    this.broadcastLatency = new TimedMetric(
      this.registry,
      'platform_broadcast_seconds',
      'Time to fan one broadcast out to its resources (handed to the sockets, not yet read by the clients)',
      [0.00001, 0.0001, 0.001, 0.01, 0.1, 1]
    )
    this.backpressureDrops = new Counter({
      name: 'platform_backpressure_drops_total',
      help: 'Frames a WebSocket refused at its backpressure cap (the consumer is then closed as slow)',
      registers
    })
    this.resourcesConnected = new Counter({
      name: 'platform_resources_connected_total',
      help: 'Resources (WebSocket, SSE and long-polling clients of broadcasters) that joined',
      registers
    })
    this.resourcesDisconnected = new Counter({
      name: 'platform_resources_disconnected_total',
      help: 'Resources that left, by any cause (client close, server disconnect, slow consumer, timeout)',
      registers
    })
    this.pluginFailures = new Counter({
      name: 'platform_plugin_failures_total',
      help: 'Plugin calls failed by the sandbox (timeout, out of memory, crash, invalid result), by plugin and reason; plugin throws are not counted',
      labelNames: ['plugin', 'reason'],
      registers
    })
    this.storeWriteFailures = new Counter({
      name: 'platform_store_write_failures_total',
      help: 'LMDB writes (appends and retention trims) of a retained log that failed, by log (audit, decisions)',
      labelNames: ['log'],
      registers
    })
    this.anonymousDenied = new Counter({
      name: 'platform_log_anonymous_denied_total',
      help: 'Denied anonymous attempts offered to a log (audit, decisions), by outcome: kept (sampled) or dropped (only counted)',
      labelNames: ['log', 'outcome'],
      registers
    })
    for (const t of ['websocket', 'sse', 'long-polling']) this.openConnections.set({ transport: t }, 0)
  }

  /** Counts a log's denied anonymous attempts, kept or dropped by its sampling. */
  countAnonymousDenied(log: string): (kept: boolean) => void {
    return (kept) => {
      this.anonymousDenied.inc({ log, outcome: kept ? 'kept' : 'dropped' })
    }
  }

  text(): Promise<string> {
    return this.registry.metrics()
  }
  get contentType(): string {
    return this.registry.contentType
  }
}
