/**
 * The text-delta frames one turn produces within one pass of the event loop, written together: a
 * runtime that hands over many deltas at once (a model's network chunk often holds several tokens)
 * costs one write and one syscall for them, not one each. A pass ends when its microtasks have
 * run: a `process.nextTick` queued from inside them runs once the microtask queue is empty, so a
 * paced runtime's single delta still leaves in the pass that made it (and allocates nothing here).
 * One tick serves every batch with frames waiting; `flush` before any other frame keeps the order.
 */
export class TextBatch {
  private first: string | undefined
  private rest: string[] | undefined

  /** `write` gets the frames in order: the first, then the others when there were several. */
  constructor(private readonly write: (first: string, rest: readonly string[] | undefined) => void) {}

  add(frame: string): void {
    if (this.first === undefined) {
      this.first = frame
      waiting(this)
    } else (this.rest ??= []).push(frame)
  }

  /** Writes the frames waiting, if any. */
  flush(): void {
    const first = this.first
    if (first === undefined) return
    const rest = this.rest
    this.first = this.rest = undefined
    this.write(first, rest)
  }
}

const dirty: TextBatch[] = []

function waiting(b: TextBatch): void {
  if (dirty.push(b) === 1) process.nextTick(flushAll)
}

function flushAll(): void {
  // by index: a write that ends a turn may queue another batch, which this pass then takes too
  for (let i = 0; i < dirty.length; i++) dirty[i]!.flush()
  dirty.length = 0
}
