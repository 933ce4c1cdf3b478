/**
 * A list emptied and filled again on every pass of the event loop, keeping its storage: setting
 * an array's `length` to 0 gives its storage up, so a list refilled with hundreds of items each
 * pass (one per answer in flight) would allocate it again, growing step by step, every time.
 */
export class PassList<T> {
  private readonly items: (T | undefined)[] = []
  /** How many items the list holds: the first `size` slots. */
  size = 0

  /** Adds `item` at the end; returns the new size. */
  push(item: T): number {
    this.items[this.size] = item
    return ++this.size
  }

  /** The `i`th item, `i` < `size`. */
  at(i: number): T {
    return this.items[i] as T
  }

  /** Empties the list; its slots let go of what they held, so that can be collected. */
  clear(): void {
    this.items.fill(undefined, 0, this.size)
    this.size = 0
  }
}
