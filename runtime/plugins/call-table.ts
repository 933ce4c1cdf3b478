/**
 * Calls in flight by call id, for a sandbox tier's hot path. A long-lived `Map` that gains and
 * loses one entry per call reallocates its hash table on nearly every call (V8 shrinks a table
 * as it empties and rehashes it as deleted slots fill it), and since the Map itself has been
 * promoted, every new table is allocated in the old generation: one isolate call at a time, that
 * garbage and the page faults and major GCs behind it were a tenth of the call's CPU. One call in
 * flight lives in fields; only calls beside it use the Map.
 */
export class CallTable<V> {
  private firstId = 0
  private first: V | undefined
  private hasFirst = false
  private readonly rest = new Map<number, V>()

  get size(): number {
    return (this.hasFirst ? 1 : 0) + this.rest.size
  }

  get(id: number): V | undefined {
    if (this.hasFirst && id === this.firstId) return this.first
    return this.rest.size === 0 ? undefined : this.rest.get(id)
  }

  has(id: number): boolean {
    return (this.hasFirst && id === this.firstId) || (this.rest.size !== 0 && this.rest.has(id))
  }

  set(id: number, value: V): void {
    if (this.hasFirst && id !== this.firstId) this.rest.set(id, value)
    else {
      this.firstId = id
      this.first = value
      this.hasFirst = true
    }
  }

  /** Removes `id`; true when it was there. */
  delete(id: number): boolean {
    if (this.hasFirst && id === this.firstId) {
      this.hasFirst = false
      this.first = undefined
      return true
    }
    return this.rest.size !== 0 && this.rest.delete(id)
  }

  clear(): void {
    this.hasFirst = false
    this.first = undefined
    if (this.rest.size !== 0) this.rest.clear()
  }

  /** The ids in flight, a copy (callers settle calls while they walk it). */
  ids(): number[] {
    const out = this.hasFirst ? [this.firstId] : []
    for (const id of this.rest.keys()) out.push(id)
    return out
  }
}
