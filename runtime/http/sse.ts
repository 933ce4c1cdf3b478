import type { HttpResponse } from 'uWebSockets.js'

/** What a stream needs of the request it answers: the Context, kept narrow so this file does not import it. */
export interface SseTarget {
  readonly res: HttpResponse
  readonly requestId: string
  readonly aborted: boolean
  done: boolean
  status: number
  watchAbort(): void
  onAbort(fn: () => void): void
  writeHeaders(): void
}

export interface SseOptions {
  /** `retry:` hint sent to the client first, in milliseconds. */
  retryMs?: number
  /** Extra response headers (e.g. Mcp-Session-Id). */
  headers?: Record<string, string>
  /** Bytes queued in memory while the client is not reading; beyond it the stream is closed. */
  maxQueuedBytes?: number
}

export interface SseEvent {
  data: string
  event?: string
  id?: string | number
}

/**
 * A Server-Sent Events stream on a uWS response: headers, `id:` lines, heartbeat comments (driven
 * by the server's one shared timer) and backpressure: once uWS reports backpressure, frames are
 * queued (bounded) and flushed on writable; a client that never drains is closed.
 */
export class SseStream {
  closed = false
  /** Closed because the client stopped reading and the queue overflowed (a slow consumer). */
  slow = false
  private queue: (string | Buffer)[] = []
  private queuedBytes = 0
  private waiting = false
  private closeListeners: (() => void)[] = []
  private drainListeners: (() => void)[] = []
  private readonly maxQueuedBytes: number
  /** The frame `writePending` writes and whether uWS took it: one corked callback per stream, not one per frame. */
  private pending: string | Buffer = ''
  private written = true
  private readonly writePending = (): void => {
    this.written = this.ctx.res.write(this.pending)
  }

  constructor(
    readonly ctx: SseTarget,
    opts: SseOptions,
    private readonly onEnd: (s: SseStream) => void
  ) {
    this.maxQueuedBytes = opts.maxQueuedBytes ?? 4 * 1024 * 1024
    const res = ctx.res
    ctx.done = true
    ctx.status = 200
    ctx.watchAbort()
    ctx.onAbort(() => this.teardown())
    res.cork(() => {
      res.writeStatus('200 OK')
      res.writeHeader('content-type', 'text/event-stream')
      res.writeHeader('cache-control', 'no-cache')
      res.writeHeader('x-accel-buffering', 'no')
      res.writeHeader('x-request-id', ctx.requestId)
      if (opts.headers !== undefined) for (const [k, v] of Object.entries(opts.headers)) res.writeHeader(k, v)
      ctx.writeHeaders()
      res.write(opts.retryMs !== undefined ? `retry: ${opts.retryMs}\n\n` : ': connected\n\n')
    })
  }

  /** Sends one event; returns false when the frame had to be queued (client is slow). */
  send(ev: SseEvent): boolean {
    return this.write(SseStream.frame(ev))
  }

  /**
   * Several events in one write (`frames` built with SseStream.frame, shareable between streams;
   * as a Buffer, many streams share one UTF-8 encoding instead of uWS encoding the string for each).
   */
  sendFrames(frames: string | Buffer): boolean {
    return this.write(frames)
  }

  /** `sendFrames` of bytes the caller reuses once this returns: copied only if they must wait in the queue. */
  sendBytes(bytes: Buffer): boolean {
    return this.write(bytes, true)
  }

  static frame(ev: SseEvent): string {
    let frame = ''
    if (ev.event !== undefined) frame += `event: ${ev.event}\n`
    if (ev.id !== undefined) frame += `id: ${ev.id}\n`
    return frame + 'data: ' + (ev.data.includes('\n') ? ev.data.split('\n').join('\ndata: ') : ev.data) + '\n\n'
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`)
  }

  private write(frame: string | Buffer, reused = false): boolean {
    if (this.closed) return false
    if (this.waiting) return this.enqueue(reused ? Buffer.from(frame) : frame)
    this.pending = frame
    this.ctx.res.cork(this.writePending)
    this.pending = ''
    const ok = this.written
    if (!ok) {
      // uWS kept the bytes; hold further frames until it drains
      this.waiting = true
      this.ctx.res.onWritable(() => this.drain())
    }
    return ok
  }

  private enqueue(frame: string | Buffer): boolean {
    this.queuedBytes += frame.length
    if (this.queuedBytes > this.maxQueuedBytes) {
      this.slow = true
      this.close()
      return false
    }
    this.queue.push(frame)
    return false
  }

  private drain(): boolean {
    if (this.closed) return true
    const res = this.ctx.res
    let ok = true
    res.cork(() => {
      while (ok && this.queue.length > 0) {
        const f = this.queue.shift()!
        this.queuedBytes -= f.length
        ok = res.write(f)
      }
    })
    if (ok) {
      this.waiting = false
      for (const fn of this.drainListeners.splice(0)) fn()
    }
    // returning true: uWS accepted what we wrote; keep the handler while we are still waiting
    return true
  }

  /** Bytes held in memory because the client is not reading: 0 while uWS takes writes straight on. */
  get bufferedBytes(): number {
    return this.waiting ? this.queuedBytes + 1 : 0
  }

  /** Calls `fn` once the held bytes went out (at once when nothing is held); a closed stream never calls it. */
  onDrain(fn: () => void): void {
    if (this.closed) return
    if (!this.waiting) fn()
    else this.drainListeners.push(fn)
  }

  onClose(fn: () => void): void {
    if (this.closed) fn()
    else this.closeListeners.push(fn)
  }

  /** Ends the stream from the server side. */
  close(): void {
    if (this.closed) return
    if (!this.ctx.aborted) {
      const res = this.ctx.res
      res.cork(() => {
        res.end()
      })
    }
    this.teardown()
  }

  private teardown(): void {
    if (this.closed) return
    this.closed = true
    this.queue = []
    this.drainListeners = []
    this.onEnd(this)
    for (const fn of this.closeListeners.splice(0)) {
      try {
        fn()
      } catch {
        /* isolate listeners */
      }
    }
  }
}
