import type { Context } from '../http/index.js'
import { Resource, type Broadcaster } from './broadcaster.js'
import { disconnectedFrame, type Frame } from './frame.js'
import type { PollCacheMetrics } from './poll-cache-metrics.js'
import { Reason } from './types.js'

/** The transport's side of a long-polling client: schedules flushes and enforces the queue bound. */
export interface PollOwner {
  scheduleFlush(r: LongPollingResource): void
  overflow(r: LongPollingResource): void
  readonly pollCache: PollCacheMetrics
}

interface PendingPoll {
  ctx: Context
  deadline: number
  resolve: () => void
}

/**
 * A client that cannot hold a socket open: frames queue (bounded) between polls; a poll answers
 * at once when frames wait, otherwise it is held until a frame arrives or the poll timeout passes.
 * Answers are `{"uuid": ..., "messages": [<frame>, ...]}`, built by joining already-serialised items.
 */
export class LongPollingResource extends Resource {
  private queue: string[] = []
  private queuedBytes = 0
  private poll: PendingPoll | undefined
  /** Queued messages that wait for a poll (the cache); the rest of the queue goes to the held poll. */
  private cached = 0
  /** The join request answers right after joining: what joining delivers is not held for a poll. */
  private joining = true
  /** When the last poll ended (or the resource joined): idle clients are reaped from here. */
  lastSeen = Date.now()

  constructor(
    uuid: string,
    broadcaster: Broadcaster,
    private readonly owner: PollOwner,
    private readonly maxQueue: number,
    private readonly maxBytes: number
  ) {
    super(uuid, 'LONG_POLLING', broadcaster)
  }

  deliver(frame: Frame): void {
    if (this.closed) return
    const item = frame.item
    this.queue.push(item)
    this.queuedBytes += item.length
    if (this.poll === undefined && !this.joining) this.hold(1)
    if (this.queue.length > this.maxQueue || this.queuedBytes > this.maxBytes) {
      this.owner.overflow(this)
      return
    }
    if (this.poll !== undefined) this.owner.scheduleFlush(this)
  }

  /** A poll arrived: answers at once if frames wait, else holds it until `deadline`. */
  open(ctx: Context, deadline: number): Promise<void> | undefined {
    if (this.poll !== undefined) this.answer()
    if (this.queue.length > 0) {
      this.reply(ctx)
      return undefined
    }
    return new Promise<void>((resolve) => {
      this.poll = { ctx, deadline, resolve }
      ctx.onAbort(() => {
        if (this.poll?.ctx !== ctx) return
        this.poll = undefined
        // what was queued for this poll now waits for the next one
        this.hold(this.queue.length - this.cached)
        this.lastSeen = Date.now()
        resolve()
      })
    })
  }

  /** Answers the held poll, if any, with what is queued (possibly nothing). */
  answer(): void {
    const p = this.poll
    if (p === undefined) return
    this.poll = undefined
    this.reply(p.ctx)
    p.resolve()
  }

  /** Answers with what is queued, without holding; the first answer of a join also carries the token. */
  reply(ctx: Context, withToken = false): void {
    const token = withToken && this.token !== undefined ? '","token":"' + this.token : ''
    const body = '{"uuid":"' + this.uuid + token + '","messages":[' + this.queue.join(',') + ']}'
    this.joining = false
    if (this.cached > 0) {
      this.owner.pollCache.deliver(this.cached)
      this.cached = 0
    }
    this.queue = []
    this.queuedBytes = 0
    this.lastSeen = Date.now()
    ctx.send(200, body, 'application/json')
  }

  override resume(): boolean {
    this.answer()
    return true
  }

  expired(now: number): boolean {
    return this.poll !== undefined && now >= this.poll.deadline
  }
  idleSince(now: number, idleMs: number): boolean {
    return this.poll === undefined && now - this.lastSeen > idleMs
  }

  end(reason: Reason): void {
    if (this.closed) return
    this.reason = reason
    this.queue.push(disconnectedFrame(reason).item)
    this.answer()
    if (this.cached > 0) {
      this.owner.pollCache.drop(reason === Reason.queueOverflow ? 'overflow' : 'closed', this.cached)
      this.cached = 0
    }
    this.queue = []
    this.queuedBytes = 0
  }

  private hold(n: number): void {
    if (n <= 0) return
    this.cached += n
    this.owner.pollCache.hold(n)
  }

  get isSuspended(): boolean {
    return this.poll !== undefined
  }
  override get isResumed(): boolean {
    return this.poll === undefined
  }
}
