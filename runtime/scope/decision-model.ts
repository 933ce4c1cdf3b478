/**
 * A decision model answers one typed boolean question about a piece of state
 * (`DecisionModel` / `Question.Noul` / `NoulGate`). The LLM scope tier asks "is this request
 * off-topic or does it touch a forbidden topic?" and maps the typed answer to a verdict through
 * `judgeNoul`, which fails closed: nothing is clear unless the model answered `false` with a
 * belief in `true` below 0.2.
 */

/** A yes/no question; `true` is the outcome the check acts on (off-topic). */
export interface NoulQuestion {
  /** What the model is told about the task (purpose, forbidden topics). */
  readonly prompt: string
  readonly whenTrue: string
  readonly whenFalse: string
}

export type FailureReason = 'timeout' | 'capacity' | 'error' | 'unparseable' | 'invalid_answer'

export type Answer =
  /** `confidence`: the model's self-reported confidence in `value`, or null when missing or out of range. */
  | { readonly kind: 'noul'; readonly value: boolean; readonly confidence: number | null }
  | { readonly kind: 'failed'; readonly reason: FailureReason; readonly detail: string }

export interface DecisionModel {
  readonly name: string
  /** False when no real model is reachable (for instance only the demo runtime is installed). */
  isAvailable(): boolean
  /** Never rejects: every failure comes back as a failed answer. */
  decide(state: string, question: NoulQuestion, timeoutMs: number): Promise<Answer>
}

export const FLAGGED_AT = 0.5
export const CLEAR_BELOW = 0.2
/** Most characters of state one question may carry. */
export const MAX_STATE_CHARS = 256 * 1024
export const DEFAULT_DECISION_TIMEOUT_MS = 5000

export interface NoulVerdict {
  outcome: 'FLAGGED' | 'CLEAR' | 'UNCERTAIN'
  reason: string
}

const SOURCE = 'MODEL_REPORTED_FIELD'

/**
 * Rule 3 of docs/scope.md: P(true) is the reported confidence for a `true` answer and one minus it
 * for a `false` one. P >= 0.5, or `true` with no confidence, is FLAGGED; `false` with P < 0.2 is
 * CLEAR; everything else (the band between, `false` with no confidence, `true` with P < 0.2, any
 * failed answer) is UNCERTAIN.
 */
export function judgeNoul(answer: Answer | null | undefined, label: string): NoulVerdict {
  if (answer == null) return { outcome: 'UNCERTAIN', reason: 'no answer' }
  if (answer.kind === 'failed') return { outcome: 'UNCERTAIN', reason: `${answer.reason}: ${answer.detail}` }
  if (answer.confidence === null) {
    if (answer.value) return { outcome: 'FLAGGED', reason: `${label} with answer=true, confidence=unknown [${SOURCE}]` }
    return { outcome: 'UNCERTAIN', reason: `answered false with no confidence [${SOURCE}]` }
  }
  const c = answer.confidence
  const p = answer.value ? c : 1 - c
  const belief = `P(${label})=${p.toFixed(3)} from answer=${String(answer.value)} confidence=${c.toFixed(3)} [${SOURCE}]`
  if (p >= FLAGGED_AT) return { outcome: 'FLAGGED', reason: belief }
  if (p < CLEAR_BELOW) {
    return answer.value
      ? { outcome: 'UNCERTAIN', reason: `the answer is true but ${belief}` }
      : { outcome: 'CLEAR', reason: belief }
  }
  return { outcome: 'UNCERTAIN', reason: belief }
}
