import type {
  BudgetTake,
  SharedCounters,
  SlidingWindow,
  SlotPool,
  SlotTake,
  TokenBudget,
  WindowHit
} from '../contracts/index.js'

/** Distinct keys one limit tracks before the oldest idle ones are dropped (bounds caller-chosen ids). */
const MAX_KEYS = 100_000

/** Event times of one key, oldest first; `head` skips expired ones without shifting the array. */
interface Times {
  ts: number[]
  head: number
}

/**
 * The counts of one process: what a single node's limits use. Every answer is synchronous, so a
 * policy built on them is evaluated without an await. Handles of one name share their counts,
 * whatever limit each was made with (a reloaded policy keeps counting where the old one stopped).
 */
export class InProcessCounters implements SharedCounters {
  readonly kind = 'in-process'
  private readonly windows = new Map<string, Map<string, Times>>()
  private readonly pools = new Map<string, Map<string, number>>()
  private readonly budgets = new Map<string, Map<string, Bucket>>()

  /** `now` in milliseconds; tests pass a clock they move. */
  constructor(private readonly now: () => number = Date.now) {}

  window(name: string, limit: number, windowMs: number): SlidingWindow {
    let times = this.windows.get(name)
    if (times === undefined) this.windows.set(name, (times = new Map()))
    return new InProcessWindow(times, limit, windowMs, this.now)
  }

  slots(name: string, max: number): SlotPool {
    let held = this.pools.get(name)
    if (held === undefined) this.pools.set(name, (held = new Map()))
    return new InProcessSlots(held, max)
  }

  budget(name: string, capacity: number, refillMs: number): TokenBudget {
    let buckets = this.budgets.get(name)
    if (buckets === undefined) this.budgets.set(name, (buckets = new Map()))
    return new InProcessBudget(buckets, capacity, refillMs, this.now)
  }

  available(): boolean {
    return true
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}

class InProcessWindow implements SlidingWindow {
  constructor(
    private readonly times: Map<string, Times>,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number
  ) {}

  hit(key: string, peek = false): WindowHit {
    const t = this.now()
    const from = t - this.windowMs
    let w = this.times.get(key)
    if (w === undefined) {
      if (peek) return { admitted: this.limit > 0, count: 0 }
      if (this.times.size >= MAX_KEYS) this.prune(from)
      w = { ts: [], head: 0 }
      this.times.set(key, w)
    }
    const ts = w.ts
    while (w.head < ts.length && ts[w.head]! <= from) w.head++
    if (w.head > 1024 && w.head * 2 > ts.length) {
      w.ts = ts.slice(w.head)
      w.head = 0
    }
    const count = w.ts.length - w.head
    if (count >= this.limit) return { admitted: false, count }
    if (peek) return { admitted: true, count }
    w.ts.push(t)
    return { admitted: true, count: count + 1 }
  }

  private prune(from: number): void {
    for (const [k, w] of this.times) if (w.head >= w.ts.length || w.ts[w.ts.length - 1]! <= from) this.times.delete(k)
    if (this.times.size >= MAX_KEYS) this.times.delete(this.times.keys().next().value!)
  }
}

class InProcessSlots implements SlotPool {
  constructor(
    private readonly held: Map<string, number>,
    private readonly max: number
  ) {}

  acquire(key: string, peek = false): SlotTake {
    const n = this.held.get(key) ?? 0
    if (n >= this.max) return { acquired: false, held: n }
    if (peek) return { acquired: true, held: n }
    this.held.set(key, n + 1)
    return { acquired: true, held: n + 1 }
  }

  release(key: string): void {
    const n = this.held.get(key) ?? 0
    if (n <= 1) this.held.delete(key)
    else this.held.set(key, n - 1)
  }

  heldHere(key: string): number {
    return this.held.get(key) ?? 0
  }
}

interface Bucket {
  tokens: number
  at: number
}

class InProcessBudget implements TokenBudget {
  /** When the last sweep ran: at most one a second, so a crowd of keys costs no O(n) per take. */
  private sweptAt = -Infinity

  constructor(
    private readonly buckets: Map<string, Bucket>,
    private readonly capacity: number,
    private readonly refillMs: number,
    private readonly now: () => number
  ) {}

  take(key: string, cost: number): BudgetTake {
    const t = this.now()
    const need = Math.min(cost, this.capacity)
    const perMs = this.capacity / this.refillMs
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: t }
    b.tokens = Math.min(this.capacity, b.tokens + (t - b.at) * perMs)
    b.at = t
    this.keep(key, b, t)
    if (b.tokens < need) return { taken: false, waitMs: Math.ceil((need - b.tokens) / perMs) }
    b.tokens -= need
    return { taken: true, waitMs: 0 }
  }

  /** Keeps `b`; past MAX_KEYS, forgets the keys whose budget has refilled (they start full anyway). */
  private keep(key: string, b: Bucket, t: number): void {
    this.buckets.set(key, b)
    if (this.buckets.size <= MAX_KEYS || t - this.sweptAt < 1000) return
    this.sweptAt = t
    const perMs = this.capacity / this.refillMs
    for (const [k, v] of this.buckets) if (v.tokens + (t - v.at) * perMs >= this.capacity) this.buckets.delete(k)
  }
}
