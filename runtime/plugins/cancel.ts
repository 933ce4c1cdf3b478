/**
 * Cancellation on the call path. Node's AbortController builds an EventTarget per call: in a
 * profile of MCP `tools/call` two of them per call were 15% of the server's CPU. A Cancellation
 * is a flag and a listener list, and builds a real AbortSignal only when code asks for one
 * (`signal`: a plugin's or handler's `ctx.signal`, which may be handed to fetch).
 */
export class Cancellation {
  aborted = false
  reason: unknown = undefined
  private listeners: (() => void)[] | undefined
  private controller: AbortController | undefined

  abort(reason?: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError')
    this.controller?.abort(this.reason)
    const fns = this.listeners
    this.listeners = undefined
    // as EventTarget does: one throwing listener neither stops the others nor the caller
    if (fns !== undefined)
      for (const fn of fns) {
        try {
          fn()
        } catch (err) {
          queueMicrotask(() => {
            throw err
          })
        }
      }
  }

  /**
   * AbortSignal's shape, so either kind can be passed where a CancelSignal is taken;
   * like it, never fires once aborted.
   */
  addEventListener(_type: 'abort', fn: () => void, _opts?: { once?: boolean }): void {
    if (!this.aborted) (this.listeners ??= []).push(fn)
  }

  removeEventListener(_type: 'abort', fn: () => void): void {
    const i = this.listeners?.indexOf(fn) ?? -1
    if (i >= 0) this.listeners!.splice(i, 1)
  }

  /** As AbortSignal's: throws the reason once aborted. */
  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  /** A real AbortSignal that follows this cancellation, made on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.aborted) this.controller.abort(this.reason)
    }
    return this.controller.signal
  }
}

/** What the call path accepts to cancel a call: a platform Cancellation or any AbortSignal. */
export type CancelSignal = Cancellation | AbortSignal

/** The AbortSignal to hand to code outside the platform (plugins, handlers, fetch). */
export function abortSignalOf(s: CancelSignal): AbortSignal {
  return s instanceof Cancellation ? s.signal : s
}
