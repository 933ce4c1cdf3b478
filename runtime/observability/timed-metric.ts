import { Gauge, Histogram, type Registry } from 'prom-client'

/**
 * A duration histogram with its running maximum as a `<name>_max` gauge: prom-client histograms
 * keep no maximum, and the admin metrics report one (maxMs) where such a gauge exists.
 */
export class TimedMetric {
  private readonly histogram: Histogram
  private readonly maxGauge: Gauge
  private max = 0

  constructor(registry: Registry, name: string, help: string, buckets: number[]) {
    const registers = [registry]
    this.histogram = new Histogram({ name, help, buckets, registers })
    this.maxGauge = new Gauge({ name: `${name}_max`, help: `The longest of ${name} since start`, registers })
  }

  observe(seconds: number): void {
    this.histogram.observe(seconds)
    if (seconds > this.max) {
      this.max = seconds
      this.maxGauge.set(seconds)
    }
  }
}
