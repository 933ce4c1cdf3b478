/** message-length, rate-limit and concurrency-limit. */
import {
  PlatformError,
  admit,
  deny,
  isPromise,
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

/**
 * `subjectOf` keeping the last user's subject string: a limit asks for it once or twice a turn,
 * and each template would be a new string, hashed again by the counters' Map.
 */
class Subjects {
  private user = ''
  private subject = 'user:'

  of(r: AiRequest): string {
    const user = r.userId
    // the cached user is only ever one `subjectOf` answered `user:` for
    if (user === this.user && user !== '') return this.subject
    const s = subjectOf(r)
    if (typeof user === 'string' && s.startsWith('user:')) {
      this.user = user
      this.subject = s
    }
    return s
  }
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
 * Decides on a counter's answer when it comes (counts across the network; this process's counters
 * answer at once, decided without a closure). Counts out of reach refuse: the limit cannot be
 * proved to hold, so it is not risked (fail closed).
 */
function decideLater<T>(
  answer: Promise<T>,
  policy: { decide(v: T, subject: string): PolicyDecision },
  limit: string,
  subject: string
): Promise<PolicyDecision> {
  // the closures live here: one in `evaluate` would take a context on every call
  return answer.then(
    (v) => policy.decide(v, subject),
    () => deny(`${limit}: the shared counters cannot be reached, so ${subject} is refused until they can (fail closed)`)
  )
}

/**
 * Sliding window per subject: at most `limit` admissions within any `windowSeconds`, counted on
 * the platform's shared counters (this process alone, or every node of a cluster).
 */
export class RateLimitPolicy implements GovernancePolicy {
  readonly className = 'RateLimitPolicy'
  private readonly window: SlidingWindow
  private readonly subjects = new Subjects()
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
    const subject = this.subjects.of(ctx.request)
    // a dry run (`/check`) answers as a request would be answered now, without spending the quota
    const hit = this.window.hit(subject, ctx.dryRun === true)
    if (!isPromise(hit)) return this.decide(hit, subject)
    return decideLater(hit, this, 'rate-limited', subject)
  }

  decide(h: WindowHit, subject: string): PolicyDecision {
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
  private readonly subjects = new Subjects()
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
    const subject = this.subjects.of(ctx.request)
    if (ctx.phase === 'POST_RESPONSE') {
      this.slots.release(subject)
      return ADMIT
    }
    const take = this.slots.acquire(subject, ctx.dryRun === true)
    if (!isPromise(take)) return this.decide(take, subject)
    return decideLater(take, this, 'concurrency limit', subject)
  }

  decide(s: SlotTake, subject: string): PolicyDecision {
    return s.acquired
      ? ADMIT
      : deny(`concurrency limit: ${subject} already has ${s.held} in-flight (max ${this.maxConcurrent})`)
  }

  abandon(ctx: PolicyContext): void {
    // a dry run took no slot, so it gives none back
    if (ctx.dryRun !== true) this.slots.release(this.subjects.of(ctx.request))
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
