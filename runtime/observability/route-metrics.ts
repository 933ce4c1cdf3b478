import type { Registry } from 'prom-client'

const BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]

/**
 * Request count and duration of one (route pattern, method). Plain numbers on the request path;
 * prom-client only sees them when /metrics is scraped. prom-client's own `observe`/`inc` re-hash
 * their labels on every call, which cost a third of a small JSON GET.
 */
export class RouteStats {
  readonly statuses = new Map<number, number>()
  readonly buckets = new Float64Array(BUCKETS.length)
  sum = 0
  count = 0

  constructor(
    readonly route: string,
    readonly method: string
  ) {}

  record(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
    this.sum += seconds
    this.count++
    for (let i = 0; i < BUCKETS.length; i++)
      if (seconds <= BUCKETS[i]!) {
        this.buckets[i]!++
        break
      }
  }
}

interface Value {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

/** The two HTTP metrics, as custom metric objects the prom-client registry renders. */
export class RouteMetrics {
  private readonly stats = new Map<string, RouteStats>()

  constructor(registry: Registry) {
    const all = () => [...this.stats.values()]
    registry.registerMetric({
      name: 'platform_http_requests_total',
      get: async () => ({
        name: 'platform_http_requests_total',
        help: 'HTTP requests by route pattern, method and status',
        type: 'counter',
        aggregator: 'sum',
        values: all().flatMap((s) =>
          [...s.statuses].map(([status, value]): Value => ({
            labels: { route: s.route, method: s.method, status: String(status) },
            value
          }))
        )
      })
    } as never)
    const name = 'platform_http_request_duration_seconds'
    registry.registerMetric({
      name,
      get: async () => ({
        name,
        help: 'HTTP request duration by route pattern',
        type: 'histogram',
        aggregator: 'sum',
        values: all().flatMap((s) => {
          const out: Value[] = []
          let acc = 0
          for (let i = 0; i < BUCKETS.length; i++) {
            acc += s.buckets[i]!
            out.push({
              metricName: `${name}_bucket`,
              labels: { le: BUCKETS[i]!, route: s.route, method: s.method },
              value: acc
            })
          }
          out.push({
            metricName: `${name}_bucket`,
            labels: { le: '+Inf', route: s.route, method: s.method },
            value: s.count
          })
          out.push({ metricName: `${name}_sum`, labels: { route: s.route, method: s.method }, value: s.sum })
          out.push({ metricName: `${name}_count`, labels: { route: s.route, method: s.method }, value: s.count })
          return out
        })
      })
    } as never)
  }

  /** The accumulator of one (route, method): look it up once, at registration. */
  for(route: string, method: string): RouteStats {
    const key = `${method} ${route}`
    let s = this.stats.get(key)
    if (s === undefined) {
      s = new RouteStats(route, method)
      this.stats.set(key, s)
    }
    return s
  }
}
