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

/** Room for a new key's times; a ring doubles when full and halves when three quarters idle. */
const MIN_TIMES = 8

/**
 * Event times of one key, oldest first, in a ring from `head`: a busy key's times are written in
 * place, not pushed onto an array that grows, is sliced and grows again (each copy allocated young,
 * then promoted to old space with the window it held), and past a few entries they sit outside
 * the JS heap, where no scavenge copies them.
 */
interface Times {
  ts: Float64Array
  head: number
  count: number
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
      w = { ts: new Float64Array(MIN_TIMES), head: 0, count: 0 }
      this.times.set(key, w)
    }
    const ts = w.ts
    const cap = ts.length
    let { head, count } = w
    while (count > 0 && ts[head]! <= from) {
      head = head + 1 === cap ? 0 : head + 1
      count--
    }
    w.head = head
    w.count = count
    if (count >= this.limit) return { admitted: false, count }
    if (peek) return { admitted: true, count }
    if (count === cap) resize(w, cap * 2)
    else if (cap > MIN_TIMES && count * 4 < cap) resize(w, cap / 2)
    const at = w.head + count
    w.ts[at < w.ts.length ? at : at - w.ts.length] = t
    w.count = count + 1
    return { admitted: true, count: count + 1 }
  }

  private prune(from: number): void {
    for (const [k, w] of this.times) if (w.count === 0 || newest(w) <= from) this.times.delete(k)
    if (this.times.size >= MAX_KEYS) this.times.delete(this.times.keys().next().value!)
  }
}

function newest(w: Times): number {
  const at = w.head + w.count - 1
  return w.ts[at < w.ts.length ? at : at - w.ts.length]!
}

/** Moves the ring's times, oldest first, to the start of one of `cap` entries. */
function resize(w: Times, cap: number): void {
  const ts = new Float64Array(cap)
  const end = w.head + w.count
  if (end <= w.ts.length) ts.set(w.ts.subarray(w.head, end))
  else {
    ts.set(w.ts.subarray(w.head))
    ts.set(w.ts.subarray(0, end - w.ts.length), w.ts.length - w.head)
  }
  w.ts = ts
  w.head = 0
}

class InProcessSlots implements SlotPool {
  constructor(
    private readonly held: Map<string, number>,
    private readonly max: number
  ) {}

  acquire(key: string, peek = false): SlotTake {
    const n = this.held.get(key)
    if (n === undefined) {
      if (this.max <= 0) return { acquired: false, held: 0 }
      if (peek) return { acquired: true, held: 0 }
      if (this.held.size >= MAX_KEYS) this.dropIdle()
      this.held.set(key, 1)
      return { acquired: true, held: 1 }
    }
    if (n >= this.max) return { acquired: false, held: n }
    if (peek) return { acquired: true, held: n }
    this.held.set(key, n + 1)
    return { acquired: true, held: n + 1 }
  }

  /**
   * A key given back to none stays, at 0, until MAX_KEYS keys are tracked: a Map entry deleted
   * and set again on every turn costs more than the two updates in place.
   */
  release(key: string): void {
    const n = this.held.get(key)
    if (n !== undefined && n > 0) this.held.set(key, n - 1)
  }

  private dropIdle(): void {
    for (const [k, n] of this.held) if (n === 0) this.held.delete(k)
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
