import type { Context } from './context.js'

/**
 * Lingering close, as nginx does it: a client that writes its whole body before reading (Node's
 * fetch does) would get a reset (`write EPIPE`) instead of the error if the connection closed
 * while body bytes were still arriving. So after answering, the rest of the body is read and
 * dropped, at most LINGER_MS and LINGER_MAX_BYTES, then the connection is closed. The answer
 * carries `connection: close`; a client past either bound is cut off mid-response.
 */
export const LINGER_MS = 5000
export const LINGER_MAX_BYTES = 64 * 1024 * 1024

/** Answers `body` at once and drains the request body within the bounds above. */
export class Linger {
  private discarded = 0
  private readonly timer: NodeJS.Timeout
  private over = false

  constructor(
    private readonly ctx: Context,
    status: number,
    body: string,
    contentType: string
  ) {
    ctx.sendHeld(status, body, contentType)
    this.timer = setTimeout(() => {
      this.finish(true)
    }, LINGER_MS)
    this.timer.unref()
    ctx.onAbort(() => {
      this.over = true
      clearTimeout(this.timer)
    })
  }

  /** A body chunk arrived (uWS onData): counted and dropped. */
  data(bytes: number, isLast: boolean): void {
    if (this.over) return
    this.discarded += bytes
    if (isLast) this.finish(false)
    else if (this.discarded > LINGER_MAX_BYTES) this.finish(true)
  }

  /** `cut`: a bound was hit and the connection is dropped; else the body was read to its end. */
  private finish(cut: boolean): void {
    if (this.over) return
    this.over = true
    clearTimeout(this.timer)
    this.ctx.endHeld(cut)
  }
}
