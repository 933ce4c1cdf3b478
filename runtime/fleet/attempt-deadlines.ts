/**
 * The time limits of dispatch attempts: one timer per timeout length instead of a setTimeout and a
 * clearTimeout per attempt (together a tenth of a dispatch's own CPU in a profile). Attempts of
 * one length fall due in start order, so a lane's timer waits for its oldest live attempt and, on
 * firing, expires every attempt that is due and re-arms for the next. A timer left armed once no
 * attempt is live is unref'd: it fires once with nothing due and never holds the process open.
 */
type Expire = () => void

class Lane {
  private readonly live = new Map<Expire, number>()
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly ms: number) {}

  add(expire: Expire): void {
    this.live.set(expire, Date.now() + this.ms)
    if (this.timer === undefined) this.arm()
    // a live attempt keeps the process up until it is due, as its own timer did
    else if (this.live.size === 1) this.timer.ref()
  }

  delete(expire: Expire): void {
    if (this.live.delete(expire) && this.live.size === 0) this.timer?.unref()
  }

  private arm(): void {
    for (const due of this.live.values()) {
      this.timer = setTimeout(this.sweep, Math.max(1, due - Date.now()))
      return
    }
  }

  private readonly sweep = (): void => {
    this.timer = undefined
    const now = Date.now()
    for (const [expire, due] of this.live) {
      if (due > now) break
      this.live.delete(expire)
      expire()
    }
    if (this.timer === undefined) this.arm()
  }
}

export class AttemptDeadlines {
  private readonly lanes = new Map<number, Lane>()

  /** `expire` runs once `ms` have passed, unless `delete` came first. */
  add(ms: number, expire: Expire): void {
    let lane = this.lanes.get(ms)
    if (lane === undefined) {
      lane = new Lane(ms)
      this.lanes.set(ms, lane)
    }
    lane.add(expire)
  }

  delete(ms: number, expire: Expire): void {
    this.lanes.get(ms)?.delete(expire)
  }
}
