/** message-length, rate-limit and concurrency-limit. */
import {
  PlatformError,
  admit,
  deny,
  type AiRequest,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision,
  type PolicyDescriptor,
  type SharedCounters,
  type SlidingWindow,
  type SlotPool,
  type SlotTake,
  type WindowHit
} from '../../contracts/index.js'
import { InProcessCounters } from '../../store/index.js'
import { GOVERNANCE_ERRORS } from '../errors.js'
import { asInt } from './config.js'

const ADMIT = admit()

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

/**
 * Decides on a counter's answer: at once when it is synchronous (this process's counters), else
 * when it comes (counts across the network). Counts out of reach refuse: the limit cannot be proved
 * to hold, so it is not risked (fail closed).
 */
function decideOn<T>(
  answer: T | Promise<T>,
  decide: (v: T) => PolicyDecision,
  limit: string,
  subject: string
): PolicyDecision | Promise<PolicyDecision> {
  if (typeof (answer as Promise<T> | null)?.then !== 'function') return decide(answer as T)
  return (answer as Promise<T>).then(decide, () =>
    deny(`${limit}: the shared counters cannot be reached, so ${subject} is refused until they can (fail closed)`)
  )
}

/**
 * Sliding window per subject: at most `limit` admissions within any `windowSeconds`, counted on
 * the platform's shared counters (this process alone, or every node of a cluster).
 */
export class RateLimitPolicy implements GovernancePolicy {
  readonly className = 'RateLimitPolicy'
  private readonly window: SlidingWindow
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly limit: number,
    readonly windowSeconds: number,
    counters: SharedCounters = new InProcessCounters()
  ) {
    this.window = counters.window(`rate-limit:${name}`, limit, windowSeconds * 1000)
  }

  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    const subject = subjectOf(ctx.request)
    // a dry run (`/check`) answers as a request would be answered now, without spending the quota
    return decideOn(
      this.window.hit(subject, ctx.dryRun === true),
      (h) => this.decide(h, subject),
      'rate-limited',
      subject
    )
  }

  private decide(h: WindowHit, subject: string): PolicyDecision {
    return h.admitted
      ? ADMIT
      : deny(`rate-limited: ${subject} exceeded ${this.limit} requests per ${this.windowSeconds}s`)
  }
}

/**
 * In-flight turns per subject, held on the platform's shared counters: pre-admission takes a
 * slot, post-response releases it. The gate calls `abandon` when a later policy denies the turn,
 * so a slot never leaks.
 */
export class ConcurrencyLimitPolicy implements GovernancePolicy {
  readonly className = 'ConcurrencyLimitPolicy'
  private readonly slots: SlotPool
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly maxConcurrent: number,
    counters: SharedCounters = new InProcessCounters()
  ) {
    this.slots = counters.slots(`concurrency-limit:${name}`, maxConcurrent)
  }

  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    const subject = subjectOf(ctx.request)
    if (ctx.phase === 'POST_RESPONSE') {
      this.slots.release(subject)
      return ADMIT
    }
    return decideOn(
      this.slots.acquire(subject, ctx.dryRun === true),
      (s) => this.decide(s, subject),
      'concurrency limit',
      subject
    )
  }

  private decide(s: SlotTake, subject: string): PolicyDecision {
    return s.acquired
      ? ADMIT
      : deny(`concurrency limit: ${subject} already has ${s.held} in-flight (max ${this.maxConcurrent})`)
  }

  abandon(ctx: PolicyContext): void {
    // a dry run took no slot, so it gives none back
    if (ctx.dryRun !== true) this.slots.release(subjectOf(ctx.request))
  }

  /** Slots `subject` holds on this node. */
  held(subject: string): number {
    return this.slots.heldHere(subject)
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

export const rateLimitFactory =
  (counters: SharedCounters) =>
  (d: PolicyDescriptor): GovernancePolicy => {
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
    return new RateLimitPolicy(d.name, d.source, d.version, limit, windowSeconds, counters)
  }

export const concurrencyLimitFactory =
  (counters: SharedCounters) =>
  (d: PolicyDescriptor): GovernancePolicy => {
    const max = asInt(d.config['max-concurrent'], 0)
    if (max <= 0)
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
        detail: "concurrency-limit requires a positive 'max-concurrent' under config"
      })
    return new ConcurrencyLimitPolicy(d.name, d.source, d.version, max, counters)
  }
