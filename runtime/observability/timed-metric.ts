import { Gauge, Histogram, type Registry } from 'prom-client'

/** prom-client's own tally of a histogram without labels, as it keeps it (version 15). */
interface HistogramValues {
  bucketValues: Record<number, number>
  sum: number
  count: number
}

/**
 * A duration histogram with its running maximum as a `<name>_max` gauge: prom-client histograms
 * keep no maximum, and the admin metrics report one (maxMs) where such a gauge exists.
 * Observations are tallied here and handed to the histogram when it is read (a scrape, the admin
 * metrics): prom-client's `observe` builds a closure, a label object and a hash on every call,
 * which was a fifth of what counting an AI turn cost. A prom-client whose histogram keeps its
 * tally differently gets every observation at once, as before.
 */
export class TimedMetric {
  private readonly histogram: Histogram
  private readonly maxGauge: Gauge
  private readonly bounds: readonly number[]
  /** Observations not yet handed over, per bucket (the last one beyond every bound). */
  private readonly pending: Float64Array
  private pendingSum = 0
  private pendingCount = 0
  private readonly lazy: boolean
  private max = 0

  constructor(registry: Registry, name: string, help: string, buckets: number[]) {
    const registers = [registry]
    // in prom-client's order: an observation counts in the first bucket whose bound it does not exceed
    this.bounds = [...buckets]
    this.pending = new Float64Array(this.bounds.length + 1)
    this.histogram = new Histogram({
      name,
      help,
      buckets,
      registers,
      collect: () => this.handOver()
    })
    this.maxGauge = new Gauge({ name: `${name}_max`, help: `The longest of ${name} since start`, registers })
    this.lazy = this.values() !== undefined
  }

  observe(seconds: number): void {
    if (!this.lazy || !Number.isFinite(seconds)) this.histogram.observe(seconds)
    else {
      const { bounds } = this
      let i = 0
      while (i < bounds.length && seconds > bounds[i]!) i++
      this.pending[i]!++
      this.pendingSum += seconds
      this.pendingCount++
    }
    if (seconds > this.max) {
      this.max = seconds
      this.maxGauge.set(seconds)
    }
  }

  /** The histogram's tally without labels, made if a reset dropped it; undefined if it has no such shape. */
  private values(): HistogramValues | undefined {
    const h = this.histogram as unknown as { hashMap?: Record<string, HistogramValues> }
    if (h.hashMap !== undefined && h.hashMap[''] === undefined) this.histogram.zero({})
    const v = h.hashMap?.['']
    return typeof v?.bucketValues === 'object' && typeof v.sum === 'number' && typeof v.count === 'number'
      ? v
      : undefined
  }

  private handOver(): void {
    if (this.pendingCount === 0) return
    const v = this.values()!
    const { bounds, pending } = this
    for (let i = 0; i < bounds.length; i++) {
      if (pending[i] !== 0) v.bucketValues[bounds[i]!] = (v.bucketValues[bounds[i]!] ?? 0) + pending[i]!
    }
    v.sum += this.pendingSum
    v.count += this.pendingCount
    pending.fill(0)
    this.pendingSum = 0
    this.pendingCount = 0
  }
}
