/** Pieces joined into one flat string each time this many have arrived. */
const RUN = 32

/**
 * Text that arrives in many small pieces (a model's deltas), kept compact while the turn is in
 * flight: every RUN pieces become one flat string, so a long answer costs about its own bytes
 * rather than a string header and an array slot (or a rope node) per delta.
 */
export class TextBuffer {
  private readonly chunks: string[] = []
  /**
   * The pieces since the last run, the first `n` of the list: its slots are written over, not
   * emptied by `length = 0`, which gives up the list's storage for the next run to allocate again.
   */
  private readonly tail: string[] = []
  private n = 0
  /** Characters pushed so far: a mark to read what came after it (`since`). */
  length = 0

  push(piece: string): void {
    this.length += piece.length
    this.tail[this.n] = piece
    if (++this.n < RUN) return
    this.chunks.push(this.tail.join(''))
    this.n = 0
  }

  /** Everything pushed so far, as one string. */
  text(): string {
    const tail = this.tail.slice(0, this.n).join('')
    return this.chunks.length === 0 ? tail : this.chunks.join('') + tail
  }

  /** What was pushed after `length` was `mark`. */
  since(mark: number): string {
    return this.text().slice(mark)
  }
}
