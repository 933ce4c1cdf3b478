import type { SessionFrames } from './agent-frames.js'
import { PassList } from './pass-list.js'

/** A buffer grown past this for a burst of deltas is let go once sent, not kept for the rest of the turn. */
const KEPT_BYTES = 16 * 1024
const EMPTY = Buffer.alloc(0)

/**
 * The text-delta frames one turn produces within one pass of the event loop, written together: a
 * runtime that hands over many deltas at once (a model's network chunk often holds several tokens)
 * costs one write and one syscall for them, not one each. A pass ends when its microtasks have
 * run: a `process.nextTick` queued from inside them runs once the microtask queue is empty, so a
 * paced runtime's single delta still leaves in the pass that made it. One tick serves every batch
 * with frames waiting; `flush` before any other frame keeps the order.
 *
 * The frames are UTF-8 bytes in one buffer of the batch's, reused from pass to pass: a token costs
 * no frame string to join and none for the socket to encode, and a pass of one frame (a paced
 * runtime's) is sent as a view kept since an earlier frame of the same length.
 */
export class TextBatch {
  private buf = EMPTY
  private at = 0
  /**
   * Where each waiting frame ends, the first `n` of the list: not emptied by `length = 0`,
   * which gives up the list's storage, so each pass would allocate it again.
   */
  private readonly ends: number[] = []
  private n = 0
  /** Views of the buffer from its start, by the length of a pass's one frame. */
  private views: Buffer[] = []

  /** `write` gets the batch once per pass, to read its frames from (`frame`, `all`) before it returns. */
  constructor(
    private readonly frames: SessionFrames,
    private readonly sse: boolean,
    private readonly write: (batch: TextBatch) => void
  ) {}

  /** Adds the text delta's frame, numbered now. */
  add(delta: string): void {
    const room = this.frames.textDeltaRoom(delta)
    if (this.at + room > this.buf.length) this.grow(room)
    this.at = this.frames.writeTextDelta(this.buf, this.at, delta, this.sse)
    this.ends[this.n] = this.at
    if (++this.n === 1) waiting(this)
  }

  /** How many frames wait. */
  get count(): number {
    return this.n
  }

  /** The `i`th waiting frame's bytes: valid until `write` returns. */
  frame(i: number): Buffer {
    return i === 0 ? this.view(this.ends[0]!) : this.buf.subarray(this.ends[i - 1], this.ends[i])
  }

  /** Every waiting frame, one after another: valid until `write` returns. */
  all(): Buffer {
    return this.n === 1 ? this.view(this.at) : this.buf.subarray(0, this.at)
  }

  /** Writes the frames waiting, if any. */
  flush(): void {
    if (this.n === 0) return
    try {
      this.write(this)
    } finally {
      this.n = 0
      this.at = 0
      if (this.buf.length > KEPT_BYTES) {
        this.buf = EMPTY
        this.views = []
      }
    }
  }

  private view(length: number): Buffer {
    return (this.views[length] ??= this.buf.subarray(0, length))
  }

  private grow(room: number): void {
    const buf = Buffer.allocUnsafeSlow(Math.max(2 * this.buf.length, this.at + room, 1024))
    this.buf.copy(buf, 0, 0, this.at)
    this.buf = buf
    this.views = []
  }
}

const dirty = new PassList<TextBatch>()

function waiting(b: TextBatch): void {
  if (dirty.push(b) === 1) process.nextTick(flushAll)
}

function flushAll(): void {
  try {
    // by index: a write that ends a turn may queue another batch, which this pass then takes too
    for (let i = 0; i < dirty.size; i++) dirty.at(i).flush()
  } finally {
    dirty.clear()
  }
}
