/** Fixed-capacity buffer keeping the newest entries; the memory tier of audit and decision logs. */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[]
  private start = 0
  private count = 0

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer')
    this.items = new Array(capacity)
  }

  push(item: T): void {
    const end = (this.start + this.count) % this.capacity
    this.items[end] = item
    if (this.count < this.capacity) this.count++
    else this.start = (this.start + 1) % this.capacity
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
