import { randomBytes } from 'node:crypto'
import { Cancellation } from './cancel.js'
import { pluginCallError, type InvokeOptions } from './contract.js'

/** Events a sandbox may send before it must wait for the host to take some. */
export const STREAM_WINDOW = 32
/** How long a stopped stream's plugin call may take to wind down (run its `finally`) before it is aborted. */
const STOP_GRACE_MS = 500

/** What stops a stream: an AbortSignal, a Cancellation, or any signal of that shape. */
export interface StopSignal {
  readonly aborted: boolean
  addEventListener(type: 'abort', fn: () => void, opts?: { once?: boolean }): void
  removeEventListener(type: 'abort', fn: () => void): void
}

/** Starts the plugin call that feeds a stream: the stream's id and allowance go to the sandbox in the call's args. */
export type StreamCall = (stream: { id: string; window: number }, opts: InvokeOptions) => Promise<unknown>

/**
 * A plugin runtime's events as they arrive from its sandbox. The sandbox pushes events as progress
 * messages within an allowance and asks for more (`runtime.pull`) when it runs out; the host grants
 * more only once its consumer has taken half the window, so at most `STREAM_WINDOW` events wait
 * here however fast the plugin yields. A sandbox that sends beyond its allowance ends the stream
 * with an error. `return()` (the consumer stopped, or the caller's signal) answers the pending pull
 * with 0, so the plugin's generator is closed by `return()`, and aborts the call if it does not end.
 */
export class PluginEventStream implements AsyncIterableIterator<unknown> {
  private readonly queue: unknown[] = []
  private head = 0
  private allowed = STREAM_WINDOW
  private received = 0
  private ended = false
  private failure: Error | undefined
  /** The plugin call is being stopped (no more events are taken). */
  private stopped = false
  /** The consumer stopped reading (return() or the caller's signal). */
  private closed = false
  private waiter: ((r: IteratorResult<unknown>) => void) | undefined
  private failer: ((e: Error) => void) | undefined
  private pull: ((credit: number) => void) | undefined
  private readonly hard = new Cancellation()
  private grace: NodeJS.Timeout | undefined
  private readonly onAbort = (): void => {
    this.close()
  }

  constructor(
    private readonly plugin: string,
    private readonly signal?: StopSignal
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true })
  }

  /** Starts the call; `done` runs when it has settled (the registry forgets the stream then). */
  start(id: string, call: StreamCall, done: () => void): void {
    call(
      { id, window: STREAM_WINDOW },
      {
        signal: this.hard,
        onProgress: (e) => {
          this.push(e)
        }
      }
    ).then(
      (result) => {
        // a plugin that returned an array sent it whole at the end
        if (Array.isArray(result) && !this.stopped) for (const e of result) this.deliver(e)
        this.finish(undefined)
        done()
      },
      (err: unknown) => {
        this.finish(err instanceof Error ? err : new Error(String(err)))
        done()
      }
    )
    if (this.signal?.aborted === true) this.close()
  }

  /** The sandbox asks for more: answered once the consumer has room, with how many it may send (0: stop). */
  credit(): Promise<number> {
    if (this.stopped || this.ended) return Promise.resolve(0)
    if (this.pull !== undefined) return Promise.reject(new Error('runtime.pull: a pull is already waiting'))
    return new Promise((resolve) => {
      this.pull = resolve
      this.grant()
    })
  }

  next(): Promise<IteratorResult<unknown>> {
    if (!this.closed && this.head < this.queue.length) {
      const value = this.queue[this.head]
      this.queue[this.head++] = undefined
      if (this.head === this.queue.length) {
        this.queue.length = 0
        this.head = 0
      }
      this.grant()
      return Promise.resolve({ value, done: false })
    }
    if (this.failure !== undefined && !this.closed) return Promise.reject(this.failure)
    if (this.ended || this.closed) return Promise.resolve({ value: undefined, done: true })
    return new Promise((resolve, reject) => {
      this.waiter = resolve
      this.failer = reject
    })
  }

  return(): Promise<IteratorResult<unknown>> {
    this.close()
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  private push(e: unknown): void {
    if (this.ended || this.stopped) return
    if (++this.received > this.allowed) {
      this.fail(
        pluginCallError(
          this.plugin,
          'invalid-result',
          `plugin '${this.plugin}' sent more runtime events than the host asked for (window ${STREAM_WINDOW})`
        )
      )
      this.stopCall()
      return
    }
    this.deliver(e)
  }

  private deliver(e: unknown): void {
    if (this.waiter !== undefined) {
      const w = this.waiter
      this.waiter = undefined
      this.failer = undefined
      w({ value: e, done: false })
      this.grant()
      return
    }
    this.queue.push(e)
  }

  /** Answers a waiting pull once at most half the window is queued. */
  private grant(): void {
    if (this.pull === undefined) return
    const queued = this.queue.length - this.head
    if (queued > STREAM_WINDOW / 2) return
    const credit = STREAM_WINDOW - queued
    // what the sandbox may have sent in all: everything received, plus the new allowance
    this.allowed = this.received + credit
    const p = this.pull
    this.pull = undefined
    // on the next turn of the event loop: an inline plugin that floods would otherwise chain
    // microtasks with its consumer for ever and starve every socket
    setImmediate(p, credit)
  }

  private finish(err: Error | undefined): void {
    this.signal?.removeEventListener('abort', this.onAbort)
    clearTimeout(this.grace)
    if (this.ended) return
    this.ended = true
    if (err !== undefined) this.fail(err)
    else if (this.waiter !== undefined && this.head >= this.queue.length) {
      const w = this.waiter
      this.waiter = undefined
      this.failer = undefined
      w({ value: undefined, done: true })
    }
    this.answerPull(0)
  }

  private fail(err: Error): void {
    this.failure ??= err
    if (this.failer !== undefined && !this.closed) {
      const f = this.failer
      this.waiter = undefined
      this.failer = undefined
      f(this.failure)
    }
  }

  private close(): void {
    if (this.closed) return
    this.closed = true
    this.signal?.removeEventListener('abort', this.onAbort)
    this.queue.length = 0
    this.head = 0
    if (this.waiter !== undefined) {
      const w = this.waiter
      this.waiter = undefined
      this.failer = undefined
      w({ value: undefined, done: true })
    }
    this.stopCall()
  }

  /** Ends the plugin call: a plugin parked at a yield ends at once, one busy elsewhere is aborted after a grace. */
  private stopCall(): void {
    if (this.stopped) return
    this.stopped = true
    this.answerPull(0)
    if (this.ended) return
    this.grace = setTimeout(() => {
      this.hard.abort('cancelled')
    }, STOP_GRACE_MS)
    this.grace.unref()
  }

  private answerPull(credit: number): void {
    const p = this.pull
    this.pull = undefined
    p?.(credit)
  }
}

const ID_BYTES = 18
const IDS_PER_FILL = 256

/**
 * The runtime streams open now, by an unguessable id that travels into the sandbox; a pull must
 * come from the plugin that owns the stream.
 */
export class RuntimeStreams {
  private readonly open = new Map<string, { plugin: string; stream: PluginEventStream }>()
  private idPool: Buffer = Buffer.alloc(0)
  private idAt = 0

  /**
   * An unguessable stream id: 18 random bytes, taken from a pool filled 256 ids at a time (a
   * `randomBytes` call per stream was a tenth of a governed turn's CPU).
   */
  private streamId(): string {
    if (this.idAt + ID_BYTES > this.idPool.length) {
      this.idPool = randomBytes(ID_BYTES * IDS_PER_FILL)
      this.idAt = 0
    }
    const id = this.idPool.toString('base64url', this.idAt, this.idAt + ID_BYTES)
    this.idAt += ID_BYTES
    return id
  }

  /** Opens a stream fed by `call` in `plugin`'s sandbox; `signal` stops it. */
  begin(plugin: string, call: StreamCall, signal?: StopSignal): PluginEventStream {
    const id = this.streamId()
    const stream = new PluginEventStream(plugin, signal)
    this.open.set(id, { plugin, stream })
    stream.start(id, call, () => {
      this.open.delete(id)
    })
    return stream
  }

  /** Streams whose plugin call has not settled yet. */
  get size(): number {
    return this.open.size
  }

  /** One host call from `plugin`'s sandbox: `args` leads with the stream id. */
  async call(plugin: string, op: string, args: unknown[]): Promise<unknown> {
    if (op !== 'runtime.pull') throw new Error(`unknown capability '${op}'`)
    const id = args[0]
    const s = typeof id === 'string' ? this.open.get(id) : undefined
    if (s === undefined || s.plugin !== plugin) throw new Error(`${op}: no open runtime stream with this id`)
    return await s.stream.credit()
  }
}
