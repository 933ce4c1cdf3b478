import type { PlatformError } from '../contracts/index.js'
import type { CancelSignal } from './cancel.js'

/** At most `limit` calls run at once; the rest wait in FIFO order (a cancelled waiter leaves the queue). */
export class CallSlots {
  private running = 0
  private readonly waiting: { go: () => void; fail: (e: Error) => void }[] = []
  private closedWith: PlatformError | undefined

  constructor(private readonly limit: number) {}

  acquire(signal?: CancelSignal): Promise<void> | void {
    if (this.closedWith !== undefined) throw this.closedWith
    if (this.running < this.limit) {
      this.running++
      return
    }
    return new Promise<void>((resolve, reject) => {
      const w = {
        go: () => {
          signal?.removeEventListener('abort', onAbort)
          this.running++
          resolve()
        },
        fail: (e: Error) => {
          signal?.removeEventListener('abort', onAbort)
          reject(e)
        }
      }
      const onAbort = (): void => {
        const i = this.waiting.indexOf(w)
        if (i >= 0) {
          this.waiting.splice(i, 1)
          reject(signal!.reason instanceof Error ? signal!.reason : new Error('cancelled while queued'))
        }
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(w)
    })
  }

  release(): void {
    this.running--
    const next = this.waiting.shift()
    if (next !== undefined) next.go()
  }

  close(err: PlatformError): void {
    this.closedWith = err
    for (const w of this.waiting.splice(0)) w.fail(err)
  }
}
