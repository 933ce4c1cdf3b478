/**
 * `/metrics` and `/metrics/all`, read from the platform's prom-client registry (no counters of
 * their own); the live counts (broadcasters, rooms, AI sessions) come from their owners.
 */
import type { MetricObjectWithValues, MetricValueWithName } from 'prom-client'
import type { AdminDeps } from './admin-deps.js'
import type { AdminRoute } from './route-table.js'

type Json = MetricObjectWithValues<MetricValueWithName<string>>

const round = (n: number): number => Math.round(n * 100) / 100

/** The sum of every value of metric `name` (all label sets), 0 when it is not registered. */
function total(all: Map<string, Json>, name: string): number {
  const m = all.get(name)
  if (m === undefined) return 0
  let s = 0
  for (const v of m.values) if (v.metricName === undefined || v.metricName === name) s += v.value
  return s
}

/** The running maximum a TimedMetric keeps beside histogram `name`, in the histogram's unit. */
function maxOf(all: Map<string, Json>, name: string): number | undefined {
  const v = all.get(`${name}_max`)?.values[0]
  return v === undefined ? undefined : v.value
}

/** `{count, meanMs, maxMs, totalTimeMs}` of a seconds histogram without labels (zeros when absent). */
function timing(all: Map<string, Json>, name: string): Record<string, number> {
  let count = 0
  let sum = 0
  for (const v of all.get(name)?.values ?? []) {
    if (v.metricName === `${name}_count`) count += v.value
    else if (v.metricName === `${name}_sum`) sum += v.value
  }
  return {
    count,
    meanMs: count === 0 ? 0 : round((sum / count) * 1000),
    maxMs: round((maxOf(all, name) ?? 0) * 1000),
    totalTimeMs: round(sum * 1000)
  }
}

/**
 * One row per metric and label set: a value, or for histograms and summaries count, meanMs,
 * maxMs (where a `<name>_max` gauge keeps it) and totalTimeMs.
 */
function rows(metrics: Json[]): Record<string, unknown>[] {
  const byName = new Map(metrics.map((m) => [m.name, m]))
  const out: Record<string, unknown>[] = []
  for (const m of metrics) {
    const type = String(m.type)
    if (type === 'histogram' || type === 'summary') {
      const groups = new Map<string, { tags: Record<string, string | number>; count: number; sum: number }>()
      for (const v of m.values) {
        const { le: _le, quantile: _q, ...tags } = v.labels as Record<string, string | number>
        const key = JSON.stringify(tags)
        let g = groups.get(key)
        if (g === undefined) {
          g = { tags, count: 0, sum: 0 }
          groups.set(key, g)
        }
        if (v.metricName === `${m.name}_count`) g.count = v.value
        else if (v.metricName === `${m.name}_sum`) g.sum = v.value
      }
      // seconds-based metrics are reported in ms; a maximum only where one is kept, none is invented
      const scale = m.name.endsWith('_seconds') ? 1000 : 1
      const max = maxOf(byName, m.name)
      for (const g of groups.values()) {
        const row: Record<string, unknown> = { name: m.name, type, description: m.help }
        if (Object.keys(g.tags).length > 0) row.tags = g.tags
        row.count = g.count
        row.meanMs = g.count === 0 ? 0 : round((g.sum / g.count) * scale)
        if (max !== undefined && Object.keys(g.tags).length === 0) row.maxMs = round(max * scale)
        row.totalTimeMs = round(g.sum * scale)
        out.push(row)
      }
      continue
    }
    for (const v of m.values) {
      const row: Record<string, unknown> = { name: m.name, type, description: m.help }
      if (Object.keys(v.labels).length > 0) row.tags = v.labels
      row.value = round(v.value)
      out.push(row)
    }
  }
  return out
}

export function metricsRoutes(d: AdminDeps): AdminRoute[] {
  const registry = d.platform.metrics.registry
  return [
    {
      method: 'GET',
      path: '/metrics',
      summary: 'Connections, messages, broadcast latency, rooms, the long-polling cache, backpressure and AI turns',
      gate: { read: 'open' },
      handler: async () => {
        const all = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, m as Json]))
        let rooms = 0
        for (const b of d.transport.listBroadcasters()) if (b.className === 'RoomBroadcaster') rooms++
        return {
          connections: {
            active: total(all, 'platform_open_connections'),
            total: total(all, 'platform_resources_connected_total'),
            disconnects: total(all, 'platform_resources_disconnected_total')
          },
          messages: {
            broadcast: total(all, 'platform_broadcasts_total'),
            delivered: total(all, 'platform_broadcast_deliveries_total')
          },
          broadcastLatency: timing(all, 'platform_broadcast_seconds'),
          activeBroadcasters: d.transport.broadcasterCount,
          rooms: { active: rooms },
          // the long-polling message cache: messages held for a client between its polls
          cache: {
            size: total(all, 'platform_long_polling_cached_messages'),
            added: total(all, 'platform_long_polling_cache_added_total'),
            delivered: total(all, 'platform_long_polling_cache_delivered_total'),
            dropped: total(all, 'platform_long_polling_cache_dropped_total')
          },
          backpressure: {
            drops: total(all, 'platform_backpressure_drops_total'),
            disconnects: total(all, 'platform_slow_consumers_closed_total')
          },
          ai: {
            activeSessions: d.ai.sessions.activeCount(),
            promptsTotal: total(all, 'platform_ai_prompts_total'),
            streamingTextsTotal: total(all, 'platform_ai_streaming_texts_total'),
            errorsTotal: total(all, 'platform_ai_errors_total'),
            toolCallsTotal: total(all, 'platform_ai_tool_calls_total'),
            turnLatency: timing(all, 'platform_ai_turn_seconds')
          }
        }
      }
    },
    {
      method: 'GET',
      path: '/metrics/all',
      summary: 'Every metric of the registry: {name, type, description, tags?, value | count, meanMs, totalTimeMs}',
      gate: { read: 'open' },
      handler: async () => rows((await registry.getMetricsAsJSON()) as Json[])
    }
  ]
}
