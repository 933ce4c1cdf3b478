/** Fixed-capacity buffer keeping the newest entries; the memory tier of audit and decision logs. */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[]
  private start = 0
  private count = 0

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer')
    this.items = new Array(capacity)
  }

  /**
   * Adds an item, the oldest going once full; returns the position it took (see `position`), where
   * arrays beside the ring keep what goes with it. No division: a log pushes every entry here.
   */
  push(item: T): number {
    let end = this.start + this.count
    if (end >= this.capacity) end -= this.capacity
    this.items[end] = item
    if (this.count < this.capacity) this.count++
    else if (++this.start === this.capacity) this.start = 0
    return end
  }

  /** The position of the entry `i` places after the oldest kept (0 <= i < size). */
  position(i: number): number {
    const p = this.start + i
    return p >= this.capacity ? p - this.capacity : p
  }

  get size(): number {
    return this.count
  }

  /** The newest `limit` entries, oldest first. */
  last(limit = this.count): T[] {
    const n = Math.max(0, Math.min(limit, this.count))
    const out: T[] = new Array(n)
    for (let i = 0; i < n; i++) out[i] = this.items[(this.start + this.count - n + i) % this.capacity]!
    return out
  }

  /** The entry `i` places after the oldest kept (0 is the oldest), if any. */
  at(i: number): T | undefined {
    return i < 0 || i >= this.count ? undefined : this.items[(this.start + i) % this.capacity]
  }

  /** The oldest entry kept, if any. */
  oldest(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.start]
  }

  /** The newest `limit` entries, newest first. */
  newest(limit = this.count): T[] {
    return this.last(limit).reverse()
  }

  clear(): void {
    this.items.fill(undefined)
    this.start = 0
    this.count = 0
  }
}
