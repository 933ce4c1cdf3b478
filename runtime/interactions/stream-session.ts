import type { Interaction, InteractionFeed, InteractionHeader, InteractionStep, InteractionStore } from './types.js'
import { TERMINAL_STATUSES } from './types.js'
import type { TerminalFrame } from 'uws-agent-platform/client'

/** One client connection of a live stream, whatever carries it (WebSocket or SSE). */
export interface StreamSink {
  /** Sends one frame; `seq` is the SSE event id of a step frame. */
  send(json: string, seq?: number): void
  /** Bytes accepted but not yet handed to the kernel. */
  buffered(): number
  /** Resolves true once the buffered bytes went out, false when the sink closed or `ms` passed first. */
  drained(ms: number): Promise<boolean>
  /** Runs `fn`, whose sends go out together (one corked write on a WebSocket). */
  batch(fn: () => void): void
  /** Ends the stream; `slow` when the client stopped reading. */
  close(slow?: boolean): void
  readonly closed: boolean
}

export interface StreamLimits {
  /** Above this many buffered bytes the stream stops pushing and catches up from the store once drained. */
  highWater: number
  /** How long a stream may wait for its client to read before it is closed as a slow consumer. */
  stallMs: number
  /** Steps read from the store per page while catching up. */
  pageSize: number
}

/** Live steps kept per connection while it is busy; beyond them the store fills in. */
const MAX_PENDING = 256
/** Looks (5 ms apart) for a step the store does not have yet before the stream closes and the client resumes. */
const MAX_MISSES = 400

// The feed hands every subscriber the same step object, one subscriber after another, and an idle
// stream sends it at once: remembering the last frame serialises it once for all of them. A
// WeakMap keyed by every step did the same but its table grew with the steps published between
// two collections, kilobytes per interaction in flight.
let lastStep: InteractionStep | undefined
let lastFrame = ''

export function stepFrame(step: InteractionStep): string {
  if (step !== lastStep) {
    lastFrame = `{"type":"interaction-step","step":${JSON.stringify(step)}}`
    lastStep = step
  }
  return lastFrame
}

export function terminalFrame(h: InteractionHeader): string {
  return JSON.stringify({
    type: 'interaction-terminal',
    id: h.id,
    status: h.status,
    finalText: h.finalText,
    errorMessage: h.errorMessage
  } satisfies TerminalFrame)
}

/**
 * Pushes one interaction's steps to one client with no gap and no duplicate: it subscribes to the
 * feed before it reads the store, sends each step whose seq is exactly the next one, and reads the
 * store for anything else (a resume, a step the feed carried before the subscription, a backlog
 * the client was too slow for). The store is the truth; the feed only makes the common case fast.
 * Memory per connection is bounded: at most MAX_PENDING live steps wait; beyond, the store fills in.
 */
export class StreamSession {
  private last: number
  private readonly pending: InteractionStep[] = []
  private backlog: InteractionStep[] = []
  // Fields the stream writes only late in its life (its end, a slow client, a lagging store) are
  // declared here and first set in the constructor, after their declaration defined them: written
  // twice, they never count as constant. A field first changed when the process's first stream
  // ended threw away the compiled live path of every stream (recompiled in the next round).
  private overflow: boolean
  private terminal: InteractionHeader | null
  private running = false
  private again = false
  private unsubscribe: (() => void) | undefined
  private stopped: boolean
  private durable = true
  /** Consecutive looks at the store for a step the feed announced but the store does not have yet. */
  private misses: number
  /** Bytes sent since the stream last yielded to the event loop. */
  private burst = 0
  /** A send of the live steps is queued for the end of the current publication pass. */
  private queued = false

  constructor(
    private readonly store: InteractionStore,
    feed: InteractionFeed,
    readonly id: string,
    after: number,
    private readonly limits: StreamLimits
  ) {
    this.last = after
    this.overflow = false
    this.terminal = null
    this.stopped = false
    this.misses = 0
    // subscribe first: a step published from now on is either in the store when we read it, or here
    this.unsubscribe = feed.subscribe(id, {
      onStep: (step) => {
        if (step.seq <= this.last || this.overflow) return
        if (this.pending.length >= MAX_PENDING) {
          this.pending.length = 0
          this.overflow = true
        } else this.pending.push(step)
        // the steps one commit acknowledged arrive in one pass: sent together at its end
        if (this.running || this.overflow) this.kick()
        else if (!this.queued) {
          this.queued = true
          queueMicrotask(this.sendLive)
        }
      },
      onTerminal: (header) => {
        this.terminal = header
        this.kick()
      }
    })
  }

  private sink: StreamSink | undefined

  /**
   * Starts pushing to `sink`, beginning with the record read after subscribing (its steps are the
   * replay; a terminal record ends the stream after them).
   */
  start(sink: StreamSink, record: Interaction): void {
    this.sink = sink
    if (TERMINAL_STATUSES.has(record.status)) this.terminal ??= record
    // the record's steps are the replay, already in memory: sent first, with flow control
    this.backlog = record.steps.filter((s) => s.seq > this.last)
    // steps the feed delivered since subscribing that the record already holds are dropped
    const top = this.backlog.length > 0 ? this.backlog[this.backlog.length - 1]!.seq : this.last
    while (this.pending.length > 0 && this.pending[0]!.seq <= top) this.pending.shift()
    // store:false keeps its steps in its run only: a stream of one that fell behind cannot catch up
    this.durable = record.store
    this.kick()
  }

  /** Stops listening (the connection closed). */
  stop(): void {
    this.stopped = true
    this.pending.length = 0
    this.backlog = []
    this.unsubscribe?.()
    this.unsubscribe = undefined
  }

  /**
   * The common case without the pump: the client keeps up and the live steps continue the last
   * one sent. They go in one batch (one corked write on a WebSocket); anything else (a gap, the
   * end, a client that has fallen behind) is the pump's.
   */
  private readonly sendLive = (): void => {
    this.queued = false
    const sink = this.sink
    if (sink === undefined || sink.closed || this.stopped || this.running) return
    if (
      this.backlog.length === 0 &&
      !this.overflow &&
      this.terminal === null &&
      this.pending.length > 0 &&
      this.pending[0]!.seq === this.last + 1 &&
      this.hasRoom(sink)
    ) {
      sink.batch(this.sendNext)
      if (this.pending.length === 0 && this.hasRoom(sink)) return
    }
    this.kick()
  }

  /** The live steps that continue the last one sent, inside one batch (made once, not per pass). */
  private readonly sendNext = (): void => {
    const sink = this.sink!
    while (this.pending.length > 0 && this.pending[0]!.seq === this.last + 1 && this.burst <= this.limits.highWater)
      this.emit(sink, this.pending.shift()!)
  }

  private kick(): void {
    if (this.sink === undefined || this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = true
    this.pump().then(
      () => {
        this.running = false
        if (this.again) {
          this.again = false
          this.kick()
        }
      },
      () => {
        this.running = false
        this.sink?.close()
      }
    )
  }

  private async pump(): Promise<void> {
    const sink = this.sink!
    for (;;) {
      this.again = false
      if (sink.closed || this.stopped) return
      if (this.backlog.length > 0 && !(await this.sendAll(sink, this.backlog))) return
      this.backlog = []
      while (this.pending.length > 0 && !this.overflow && this.burst <= this.limits.highWater) {
        const s = this.pending[0]!
        if (s.seq <= this.last) {
          this.pending.shift()
          continue
        }
        if (s.seq !== this.last + 1) break
        this.pending.shift()
        this.emit(sink, s)
      }
      if (!(await this.room(sink))) return
      const gap = this.overflow || (this.pending.length > 0 && this.pending[0]!.seq > this.last + 1)
      if (gap && !this.durable) {
        // the client reconnects and gets the run's steps from memory again
        sink.close(true)
        return
      }
      if (gap || (this.terminal !== null && this.durable)) {
        if (this.overflow) this.pending.length = 0
        this.overflow = false
        if (!(await this.catchUp(sink))) return
        // after the terminal header the store holds every step: nothing live is still to come
        if (this.terminal !== null) this.pending.length = 0
        else while (this.pending.length > 0 && this.pending[0]!.seq <= this.last) this.pending.shift()
      }
      if (this.terminal !== null && this.pending.length === 0) {
        if (!(await this.room(sink))) return
        sink.send(terminalFrame(this.terminal))
        // a close cuts what is still buffered: let the client read the end first
        if (await sink.drained(this.limits.stallMs)) sink.close()
        else sink.close(true)
        this.stop()
        return
      }
      if (!this.again && (this.pending.length === 0 || this.pending[0]!.seq > this.last + 1)) {
        if (this.pending.length === 0) return
        // the store has not acknowledged the missing step yet: look again shortly, for a while
        if (++this.misses > MAX_MISSES) {
          sink.close()
          return
        }
        await new Promise((r) => setTimeout(r, 5))
      } else this.misses = 0
    }
  }

  /** Sends every stored step after the last one sent, page by page, waiting while the client is behind. */
  private async catchUp(sink: StreamSink): Promise<boolean> {
    for (;;) {
      const page = await this.store.steps(this.id, this.last, this.limits.pageSize)
      if (sink.closed || this.stopped) return false
      if (!(await this.sendAll(sink, page))) return false
      if (page.length < this.limits.pageSize) return true
    }
  }

  /** Sends the steps of `list` after the last one sent, in batches as large as the client can take. */
  private async sendAll(sink: StreamSink, list: readonly InteractionStep[]): Promise<boolean> {
    let i = 0
    while (i < list.length) {
      if (!this.hasRoom(sink) && !(await this.room(sink))) return false
      if (this.stopped || sink.closed) return false
      sink.batch(() => {
        for (; i < list.length && this.burst <= this.limits.highWater; i++)
          if (list[i]!.seq > this.last) this.emit(sink, list[i]!)
      })
    }
    return true
  }

  private hasRoom(sink: StreamSink): boolean {
    return this.burst <= this.limits.highWater && sink.buffered() <= this.limits.highWater
  }

  /**
   * Waits until the client can take more. Inside a uWS callback the socket is corked and its
   * buffered amount reads 0 however much was written, so every high-water mark of bytes the
   * stream also yields to the event loop once, letting uWS flush and count for real.
   */
  private async room(sink: StreamSink): Promise<boolean> {
    if (this.burst > this.limits.highWater) {
      this.burst = 0
      await new Promise((r) => setImmediate(r))
      if (sink.closed || this.stopped) return false
    }
    return sink.buffered() <= this.limits.highWater || (await this.waitDrain(sink))
  }

  private async waitDrain(sink: StreamSink): Promise<boolean> {
    if (await sink.drained(this.limits.stallMs)) return !this.stopped
    if (!sink.closed) sink.close(true)
    return false
  }

  private emit(sink: StreamSink, s: InteractionStep): void {
    const frame = stepFrame(s)
    this.burst += frame.length
    sink.send(frame, s.seq)
    this.last = s.seq
  }
}
