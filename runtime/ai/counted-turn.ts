import type { TurnEvent } from './turn-types.js'

/** What a counted turn reports: at its first read, per event, and once when it ends. */
export interface TurnCounter {
  started(): void
  event(e: TurnEvent): void
  ended(): void
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined }

/**
 * A turn's events passed on as they are and counted on the way. An iterator over the inner one
 * rather than an async generator: per event (per streamed token) it costs one `then`, where a
 * generator layer resumes, awaits the value it yields and settles one more promise. Counting
 * starts at the first read and ends exactly once: after the last event, on an error, or when the
 * reader stops (`return`, which stops the inner turn too). A turn never read is never counted.
 */
export class CountedTurn implements AsyncIterableIterator<TurnEvent> {
  private state: 'new' | 'running' | 'ended' = 'new'

  constructor(
    private readonly inner: AsyncIterator<TurnEvent>,
    private readonly counter: TurnCounter
  ) {}

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<TurnEvent>> {
    if (this.state === 'ended') return Promise.resolve(DONE)
    if (this.state === 'new') {
      this.state = 'running'
      this.counter.started()
    }
    return this.inner.next().then(this.onResult, this.onError)
  }

  async return(): Promise<IteratorResult<TurnEvent>> {
    try {
      if (this.state === 'running') await this.inner.return?.()
    } finally {
      this.end()
    }
    return DONE
  }

  private readonly onResult = (r: IteratorResult<TurnEvent>): IteratorResult<TurnEvent> => {
    if (r.done === true) this.end()
    else this.counter.event(r.value)
    return r
  }

  private readonly onError = (err: unknown): never => {
    this.end()
    throw err
  }

  private end(): void {
    const was = this.state
    this.state = 'ended'
    if (was === 'running') this.counter.ended()
  }
}
