import { PassList } from './pass-list.js'
import type { AiCancelSignal, AiTextSink } from './runtime.js'

/**
 * The demo's answer cut as it is sent: each word with the whitespace after it. A turn in flight
 * holds its text once, not an array of every word it has still to send.
 */
export class Words {
  /** Where the next word starts. */
  at = 0
  /** Tokens sent so far: every word but a delta that is one whitespace alone. */
  sent = 0

  // `test`, not `exec`: no match array per word
  private readonly space = /\s/g

  constructor(readonly text: string) {}

  get done(): boolean {
    return this.at >= this.text.length
  }

  next(): string {
    const at = this.at
    this.space.lastIndex = at
    const spaced = this.space.test(this.text)
    const end = spaced ? this.space.lastIndex : this.text.length
    if (!spaced || end - at > 1) this.sent++
    this.at = end
    return this.text.slice(at, end)
  }
}

/** How a pushed answer ended: its finish reason, or what its sink threw. */
export type PushEnd = 'stop' | 'length' | 'cancelled' | { thrown: unknown }

/** One answer whose words go to a sink, a word per event-loop turn. */
class Pushed {
  aborted = false
  private readonly onAbort = (): void => {
    this.aborted = true
  }

  constructor(
    readonly words: Words,
    readonly sink: AiTextSink,
    readonly max: number,
    private readonly signal: AiCancelSignal | undefined,
    private readonly settle: (end: PushEnd) => void
  ) {
    // a flag the listener sets: the signal's own `aborted` getter cost more than the rest of a word
    if (signal?.aborted === true) this.aborted = true
    else signal?.addEventListener('abort', this.onAbort, { once: true })
  }

  end(how: PushEnd): void {
    this.signal?.removeEventListener('abort', this.onAbort)
    this.settle(how)
  }
}

/**
 * Sends answers word by word to their sinks, one word per answer per event-loop turn (its check
 * phase), with one Immediate shared by every answer in flight. The same pacing as awaiting a turn
 * between yields, without a promise, a result object and two resumptions per word. An answer is
 * checked for cancellation before each word; a sink's promise holds its answer until it settles.
 */
export class WordPacer {
  private due = new PassList<Pushed>()
  // the list a turn went through, emptied: the next turn's, so a turn allocates no list
  private spare = new PassList<Pushed>()

  /** Resolves once `words` were all sent (or `max` tokens were, or `signal` aborted, or the sink threw). */
  push(words: Words, sink: AiTextSink, max: number, signal?: AiCancelSignal): Promise<PushEnd> {
    return new Promise<PushEnd>((resolve) => {
      const p = new Pushed(words, sink, max, signal, resolve)
      if (words.sent >= max) p.end('length')
      else this.later(p)
    })
  }

  private later(p: Pushed): void {
    if (this.due.push(p) === 1) setImmediate(this.turn)
  }

  private readonly turn = (): void => {
    const now = this.due
    this.due = this.spare
    try {
      for (let i = 0; i < now.size; i++) this.step(now.at(i))
    } finally {
      now.clear()
      this.spare = now
    }
  }

  private step(p: Pushed): void {
    if (p.aborted) {
      p.end('cancelled')
      return
    }
    let wait: void | Promise<void>
    try {
      wait = p.sink(p.words.next())
    } catch (thrown) {
      p.end({ thrown })
      return
    }
    if (wait === undefined) this.after(p)
    else
      wait.then(
        () => this.after(p),
        (thrown: unknown) => p.end({ thrown })
      )
  }

  private after(p: Pushed): void {
    if (p.words.done) p.end('stop')
    else if (p.words.sent >= p.max) p.end('length')
    else this.later(p)
  }
}
