/** message-length, rate-limit and concurrency-limit. */
import {
  PlatformError,
  admit,
  deny,
  type AiRequest,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision,
  type PolicyDescriptor
} from '../../contracts/index.js'
import { GOVERNANCE_ERRORS } from '../errors.js'
import { asInt } from './config.js'

const ADMIT = admit()
/** Distinct subjects tracked before the oldest idle ones are dropped (bounds caller-chosen ids). */
const MAX_SUBJECTS = 100_000

/** `user:<id>`, else `session:<id>`, else `anonymous`: the subject the limits count per. */
export function subjectOf(r: AiRequest): string {
  if (typeof r.userId === 'string' && r.userId.trim() !== '') return `user:${r.userId}`
  if (typeof r.sessionId === 'string' && r.sessionId.trim() !== '') return `session:${r.sessionId}`
  return 'anonymous'
}

export class MessageLengthPolicy implements GovernancePolicy {
  readonly className = 'MessageLengthPolicy'
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly maxChars: number
  ) {}
  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    const len = typeof ctx.request.message === 'string' ? ctx.request.message.length : 0
    return len > this.maxChars ? deny(`message length ${len} exceeds maximum ${this.maxChars} characters`) : ADMIT
  }
}

/** Admission times of one subject, oldest first; `head` skips expired ones without shifting the array. */
interface Window {
  ts: number[]
  head: number
}

/** Sliding window per subject: at most `limit` admissions within any `windowSeconds`. */
export class RateLimitPolicy implements GovernancePolicy {
  readonly className = 'RateLimitPolicy'
  private readonly hits = new Map<string, Window>()
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly now: () => number = Date.now
  ) {}

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    const subject = subjectOf(ctx.request)
    const t = this.now()
    const from = t - this.windowSeconds * 1000
    let w = this.hits.get(subject)
    if (w === undefined) {
      if (ctx.dryRun === true) return ADMIT
      if (this.hits.size >= MAX_SUBJECTS) this.prune(from)
      w = { ts: [], head: 0 }
      this.hits.set(subject, w)
    }
    const ts = w.ts
    while (w.head < ts.length && ts[w.head]! <= from) w.head++
    if (w.head > 1024 && w.head * 2 > ts.length) {
      w.ts = ts.slice(w.head)
      w.head = 0
    }
    if (w.ts.length - w.head >= this.limit)
      return deny(`rate-limited: ${subject} exceeded ${this.limit} requests per ${this.windowSeconds}s`)
    // a dry run (`/check`) answers as a request would be answered now, without spending the quota
    if (ctx.dryRun !== true) w.ts.push(t)
    return ADMIT
  }

  private prune(from: number): void {
    for (const [k, w] of this.hits) if (w.head >= w.ts.length || w.ts[w.ts.length - 1]! <= from) this.hits.delete(k)
    if (this.hits.size >= MAX_SUBJECTS) this.hits.delete(this.hits.keys().next().value!)
  }
}

/**
 * In-flight turns per subject: pre-admission takes a slot, post-response releases it. The gate
 * calls `abandon` when a later policy denies the turn, so a slot never leaks.
 */
export class ConcurrencyLimitPolicy implements GovernancePolicy {
  readonly className = 'ConcurrencyLimitPolicy'
  private readonly inFlight = new Map<string, number>()
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly maxConcurrent: number
  ) {}

  evaluate(ctx: PolicyContext): PolicyDecision {
    const subject = subjectOf(ctx.request)
    if (ctx.phase === 'POST_RESPONSE') {
      this.release(subject)
      return ADMIT
    }
    const n = this.inFlight.get(subject) ?? 0
    if (n >= this.maxConcurrent)
      return deny(`concurrency limit: ${subject} already has ${n} in-flight (max ${this.maxConcurrent})`)
    if (ctx.dryRun !== true) this.inFlight.set(subject, n + 1)
    return ADMIT
  }

  abandon(ctx: PolicyContext): void {
    // a dry run took no slot, so it gives none back
    if (ctx.dryRun !== true) this.release(subjectOf(ctx.request))
  }

  held(subject: string): number {
    return this.inFlight.get(subject) ?? 0
  }

  private release(subject: string): void {
    const n = this.inFlight.get(subject) ?? 0
    if (n <= 1) this.inFlight.delete(subject)
    else this.inFlight.set(subject, n - 1)
  }
}

export function messageLengthFactory(d: PolicyDescriptor): GovernancePolicy {
  const max = asInt(d.config['max-chars'], 0)
  if (max <= 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "message-length requires a positive 'max-chars' under config"
    })
  return new MessageLengthPolicy(d.name, d.source, d.version, max)
}

export function rateLimitFactory(d: PolicyDescriptor): GovernancePolicy {
  const limit = asInt(d.config.limit, 0)
  if (limit <= 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "rate-limit requires a positive 'limit' under config"
    })
  const windowSeconds = asInt(d.config['window-seconds'], 0)
  if (windowSeconds <= 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "rate-limit requires a positive 'window-seconds' under config"
    })
  return new RateLimitPolicy(d.name, d.source, d.version, limit, windowSeconds)
}

export function concurrencyLimitFactory(d: PolicyDescriptor): GovernancePolicy {
  const max = asInt(d.config['max-concurrent'], 0)
  if (max <= 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "concurrency-limit requires a positive 'max-concurrent' under config"
    })
  return new ConcurrencyLimitPolicy(d.name, d.source, d.version, max)
}
