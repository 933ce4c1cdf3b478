import { usage, type TokenUsage, type TurnEvent } from '../ai/index.js'
// one date formatted per millisecond: the steps of a burst share it
import { isoNow } from '../contracts/index.js'
import type { InteractionStatus, InteractionStep, StepType } from './types.js'

/** How a run ended, as its terminal step and header record it. */
export interface Outcome {
  status: Exclude<InteractionStatus, 'CREATED' | 'RUNNING'>
  finalText: string | null
  errorMessage: string | null
}

export interface CaptureOptions {
  /** Most non-terminal steps kept; `usage`, `completion` and `error` are always kept. */
  maxSteps: number
  /**
   * How long text deltas are coalesced before they are flushed as one `text` step even though no
   * structured step came: bounds what a live viewer waits. 0 makes each delta its own step.
   */
  coalesceMs: number
  /** Receives each step, in seq order, exactly once. */
  emit: (step: InteractionStep) => void
  now?: () => string
}

// steps that are always kept however long the run: at most one terminal, and usage per model round
const ALWAYS_KEPT: ReadonlySet<StepType> = new Set(['input', 'usage', 'completion', 'error'])

/**
 * Turns the events of one governed turn into interaction steps: text deltas coalesced into one
 * `text` step, flushed before any structured step and before the terminal step; tool events
 * and usage as their own steps; exactly one terminal step, whoever calls first (the turn's own
 * end, a cancel, a timeout) wins and everything after it is ignored.
 */
export class StepCapture {
  private seq = 0
  private kept = 0
  private dropped = 0
  private pending: string[] = []
  private timer: NodeJS.Timeout | undefined
  private ended: Outcome | undefined
  private total: TokenUsage | null = null
  private readonly now: () => string

  constructor(private readonly opts: CaptureOptions) {
    this.now = opts.now ?? isoNow
  }

  /** The outcome once the terminal step is recorded. */
  get outcome(): Outcome | undefined {
    return this.ended
  }

  /** Usage summed over the model rounds of the turn; null when no round reported counts. */
  get usage(): TokenUsage | null {
    return this.total
  }

  /** Captures one event; a terminal event (`complete`, `error`) ends the capture and returns its outcome. */
  event(e: TurnEvent): Outcome | undefined {
    if (this.ended !== undefined) return undefined
    switch (e.type) {
      case 'text':
        this.text(e.delta)
        return undefined
      case 'tool-start':
        this.step('tool-call', null, e.call.name, {
          id: e.call.id,
          arguments: e.call.arguments,
          ...(e.client === true ? { client: true } : {})
        })
        return undefined
      case 'tool-result':
        this.step('tool-result', null, e.name, { id: e.id, result: e.content })
        return undefined
      case 'tool-error':
        this.step('tool-error', e.message, e.name, { id: e.id })
        return undefined
      case 'usage':
        if (!hasCounts(e.usage)) return undefined
        this.total = add(this.total, e.usage)
        this.step('usage', null, null, {}, e.usage)
        return undefined
      case 'agent-step':
        this.step('agent-step', e.description ?? null, e.name, e.data !== undefined ? { data: e.data } : {})
        return undefined
      case 'feedback':
        // governance guidance the prompt carried: observability for the policy plane, not a step of the turn
        return undefined
      case 'complete':
        return this.complete(e.text, e.truncated === true)
      case 'error':
        return this.fail(e.message, e.code, e.code === 'cancelled' ? 'CANCELLED' : 'FAILED', e.policy)
    }
  }

  /** Captures one text delta (what a `text` event carries), without the event around it. */
  text(delta: string): void {
    if (this.ended !== undefined || delta === '') return
    // not coalesced: the delta is the step, without an array to hold and join it
    if (this.opts.coalesceMs <= 0) this.push('text', delta, null, {}, null)
    else {
      this.pending.push(delta)
      this.timer ??= setTimeout(() => this.flush(), this.opts.coalesceMs)
    }
  }

  /** Records the `completion` step: COMPLETED with `text` as the final text (null when empty). */
  complete(text: string, truncated = false): Outcome | undefined {
    if (this.ended !== undefined) return undefined
    const data: Record<string, unknown> = this.dropped > 0 ? { droppedSteps: this.dropped } : {}
    // the model stopped at the turn's output bound: the answer is whole as far as it goes
    if (truncated) data.truncated = true
    return this.end({ status: 'COMPLETED', finalText: text === '' ? null : text, errorMessage: null }, () =>
      this.step('completion', text, null, data)
    )
  }

  /** Records the `input` step: the client's input, before anything of the turn. */
  input(data: Record<string, unknown>): void {
    if (this.ended === undefined && this.seq === 0) this.push('input', null, null, data, null)
  }

  /** Records the `error` step: FAILED (or CANCELLED) with `message`; undefined when already ended. */
  fail(message: string, code: string, status: 'FAILED' | 'CANCELLED' = 'FAILED', policy?: string): Outcome | undefined {
    if (this.ended !== undefined) return undefined
    const data: Record<string, unknown> = { code }
    if (policy !== undefined) data.policy = policy
    if (this.dropped > 0) data.droppedSteps = this.dropped
    return this.end({ status, finalText: null, errorMessage: message }, () => this.step('error', message, null, data))
  }

  /** Stops without a terminal step (the process is shutting down): nothing more is emitted. */
  abandon(): void {
    this.clearTimer()
    this.pending = []
    this.ended ??= { status: 'FAILED', finalText: null, errorMessage: 'abandoned' }
  }

  private end(outcome: Outcome, record: () => void): Outcome {
    // compare-and-set: the first terminal writer wins, and its pending text lands before its step
    this.ended = outcome
    this.flushPending()
    record()
    return outcome
  }

  private flush(): void {
    if (this.ended === undefined) this.flushPending()
  }

  private flushPending(): void {
    this.clearTimer()
    if (this.pending.length === 0) return
    const text = this.pending.join('')
    this.pending = []
    this.push('text', text, null, {}, null)
  }

  private step(
    type: StepType,
    text: string | null,
    toolName: string | null,
    data: Record<string, unknown>,
    usage: TokenUsage | null = null
  ): void {
    this.flushPending()
    this.push(type, text, toolName, data, usage)
  }

  private push(
    type: StepType,
    text: string | null,
    toolName: string | null,
    data: Record<string, unknown>,
    usage: TokenUsage | null
  ): void {
    if (!ALWAYS_KEPT.has(type)) {
      if (this.kept >= this.opts.maxSteps) {
        this.dropped++
        return
      }
      this.kept++
    }
    this.opts.emit({ seq: this.seq++, type, text, toolName, data, usage, createdAt: this.now() })
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}

function hasCounts(u: TokenUsage): boolean {
  return u.input > 0 || u.output > 0 || u.cachedInput > 0 || u.total > 0
}

// built by the runtimes' own constructor: steps and headers hand the store one shape of usage
// (a spread copy and a second literal were two more, each a deopt of the store's encoder)
function add(a: TokenUsage | null, b: TokenUsage): TokenUsage {
  if (a === null) return usage(b.input, b.output, b.model, b.cachedInput, b.total)
  return usage(a.input + b.input, a.output + b.output, b.model, a.cachedInput + b.cachedInput, a.total + b.total)
}
