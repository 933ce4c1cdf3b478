/**
 * Per-call time limits with one timer per plugin instead of a setTimeout per call. A plugin's calls
 * share one timeout, so their deadlines fall in start order: the timer waits for the oldest live
 * call, and on firing expires every call that is due and re-arms for the next.
 */
export class Deadlines<K> {
  private readonly live = new Map<K, number>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly ms: number,
    private readonly expire: (key: K) => void
  ) {}

  add(key: K): void {
    this.live.set(key, Date.now() + this.ms)
    if (this.timer === undefined) this.arm()
  }

  delete(key: K): void {
    this.live.delete(key)
  }

  clear(): void {
    this.live.clear()
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private arm(): void {
    for (const due of this.live.values()) {
      // kept (not cleared or unref'd) when the last call ends, which would cost a native call per
      // call: it fires once with nothing due and stops. `clear` (dispose) drops it at once
      this.timer = setTimeout(this.sweep, Math.max(1, due - Date.now()))
      return
    }
  }

  private readonly sweep = (): void => {
    this.timer = undefined
    const now = Date.now()
    for (const [key, due] of this.live) {
      if (due > now) break
      this.live.delete(key)
      this.expire(key)
    }
    if (this.timer === undefined) this.arm()
  }
}
