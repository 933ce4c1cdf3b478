/** The element with the median `key` (the lower middle for an even count). */
export function median<T>(xs: readonly T[], key: (x: T) => number): T {
  if (xs.length === 0) throw new Error('median of nothing')
  const sorted = [...xs].sort((a, b) => key(a) - key(b))
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

/** p-th percentile (0..100) of numbers, nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]!
}

/**
 * A log-bucketed latency histogram (about 2% resolution from 1 µs to hours) that worker threads fill
 * and the main thread merges by adding counts.
 */
export const HIST_BUCKETS = 1200
const LOG_BASE = Math.log(1.02)

export function histIndex(us: number): number {
  if (!(us > 1)) return 0
  return Math.min(HIST_BUCKETS - 1, Math.floor(Math.log(us) / LOG_BASE))
}

/** Upper bound (µs) of a bucket. */
export function histValue(i: number): number {
  return Math.pow(1.02, i + 1)
}

export function histPercentile(h: ArrayLike<number>, p: number): number {
  let total = 0
  for (let i = 0; i < h.length; i++) total += h[i]!
  if (total === 0) return NaN
  const want = Math.ceil((p / 100) * total)
  let seen = 0
  for (let i = 0; i < h.length; i++) {
    seen += h[i]!
    if (seen >= want) return histValue(i)
  }
  return histValue(h.length - 1)
}
