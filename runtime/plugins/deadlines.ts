/**
 * Per-call time limits with one timer per plugin instead of a setTimeout per call. A plugin's calls
 * share one timeout, so their deadlines fall in start order: the timer waits for the oldest live
 * call, and on firing expires every call that is due and re-arms for the next. With `unrefIdle`
 * the timer left armed while no call is live is unref'd, so a long timeout (a fleet agent's two
 * minutes) never holds the process open after the last call.
 */
export class Deadlines<K> {
  private readonly live = new Map<K, number>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly ms: number,
    private readonly expire: (key: K) => void,
    private readonly unrefIdle = false
  ) {}

  add(key: K): void {
    this.live.set(key, Date.now() + this.ms)
    if (this.timer === undefined) this.arm()
    // a live call keeps the process up until it is due, as a timer of its own would
    else if (this.unrefIdle && this.live.size === 1) this.timer.ref()
  }

  delete(key: K): void {
    if (this.live.delete(key) && this.unrefIdle && this.live.size === 0) this.timer?.unref()
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
