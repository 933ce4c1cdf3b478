/**
 * EvalRun: one LLM-as-judge run a CI pipeline records. Validated on the way in; immutable once
 * stored. Missing or null strings become "", a missing timestamp is now.
 */
import { PlatformError } from '../contracts/index.js'
import { ADMIN_ERRORS } from './errors.js'
import { shown } from './shown-value.js'

export interface EvalRun {
  id: string
  baseline: string
  /** ISO-8601 instant. */
  timestamp: string
  agentVersion: string
  prompt: string
  judgeResponse: string
  verdict: boolean | null
  scores: Record<string, number>
  judgeModel: string
  passed: boolean
  notes: string
}

/** `[{baseline, total, passed, passRate, lastRunAt, lastVerdict}]` of GET /evals/baselines. */
export interface BaselineSummary {
  baseline: string
  total: number
  passed: number
  /** passed / total, 2 decimals. */
  passRate: number
  lastRunAt: string
  /** The latest run's `passed`. */
  lastVerdict: boolean
}

const LABEL = /^[A-Za-z0-9_\-.:]+$/
const STRINGS = ['agentVersion', 'prompt', 'judgeResponse', 'judgeModel', 'notes'] as const

/** A run that breaks a rule: EVAL_RUN_INVALID naming what is wrong. */
function invalid(detail: string): PlatformError {
  return new PlatformError(ADMIN_ERRORS.EVAL_RUN_INVALID, { detail })
}

function label(v: unknown, name: string): string {
  if (typeof v !== 'string' || !LABEL.test(v)) throw invalid(`${name} must match [A-Za-z0-9_\\-.:]+ (was: ${shown(v)})`)
  return v
}

/** The run a request body describes, or EVAL_RUN_INVALID saying what is wrong. */
export function parseEvalRun(body: unknown, now: () => Date = () => new Date()): EvalRun {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('expected a JSON object (an EvalRun)')
  const b = body as Record<string, unknown>
  const id = label(b.id, 'id')
  const baseline = label(b.baseline, 'baseline')
  let timestamp = now().toISOString()
  if (b.timestamp !== undefined && b.timestamp !== null) {
    const ms = typeof b.timestamp === 'string' ? Date.parse(b.timestamp) : NaN
    if (Number.isNaN(ms)) throw invalid(`timestamp must be an ISO-8601 instant (was: ${shown(b.timestamp)})`)
    timestamp = new Date(ms).toISOString()
  }
  const strings = {} as Record<(typeof STRINGS)[number], string>
  for (const k of STRINGS) {
    const v = b[k]
    if (v !== undefined && v !== null && typeof v !== 'string') throw invalid(`${k} must be a string`)
    strings[k] = v ?? ''
  }
  if (b.verdict !== undefined && b.verdict !== null && typeof b.verdict !== 'boolean')
    throw invalid('verdict must be true, false or null')
  if (b.passed !== undefined && typeof b.passed !== 'boolean') throw invalid('passed must be a boolean')
  const scores: Record<string, number> = {}
  if (b.scores !== undefined && b.scores !== null) {
    if (typeof b.scores !== 'object' || Array.isArray(b.scores)) throw invalid('scores must be an object of numbers')
    for (const [k, v] of Object.entries(b.scores as Record<string, unknown>)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(`scores.${k} must be a number`)
      scores[k] = v
    }
  }
  return {
    id,
    baseline,
    timestamp,
    agentVersion: strings.agentVersion,
    prompt: strings.prompt,
    judgeResponse: strings.judgeResponse,
    verdict: (b.verdict as boolean | null | undefined) ?? null,
    scores,
    judgeModel: strings.judgeModel,
    passed: (b.passed as boolean | undefined) ?? false,
    notes: strings.notes
  }
}

/** Newest first; ties by id so the order is total. */
export function newestFirst(a: EvalRun, b: EvalRun): number {
  return a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

/** The baselines summary of `runs`, sorted by baseline. */
export function summarize(runs: Iterable<EvalRun>): BaselineSummary[] {
  const by = new Map<string, { total: number; passed: number; last: EvalRun }>()
  for (const r of runs) {
    const s = by.get(r.baseline)
    if (s === undefined) by.set(r.baseline, { total: 1, passed: r.passed ? 1 : 0, last: r })
    else {
      s.total++
      if (r.passed) s.passed++
      if (newestFirst(r, s.last) < 0) s.last = r
    }
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([baseline, s]) => ({
      baseline,
      total: s.total,
      passed: s.passed,
      passRate: Math.round((s.passed / s.total) * 100) / 100,
      lastRunAt: s.last.timestamp,
      lastVerdict: s.last.passed
    }))
}
