/** pii-redaction, cost-ceiling and output-length-zscore: guardrails exposed as policies. */
import {
  PlatformError,
  admit,
  deny,
  transform,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision,
  type PolicyDescriptor
} from '../../contracts/index.js'
import { GOVERNANCE_ERRORS } from '../errors.js'
import { asInt, asNumber, asString, doubleText, listText } from './config.js'

const ADMIT = admit()

interface PiiPattern {
  re: RegExp
  replacement: string
  kind: string
}
/** A conservative default set; an NLP-grade detector belongs in a plugin policy type. */
const PII: readonly PiiPattern[] = [
  { re: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, replacement: '[redacted-email]', kind: 'email' },
  { re: /\+?\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]?\d{3}[\s.-]?\d{3,4}/g, replacement: '[redacted-phone]', kind: 'phone' },
  { re: /\b(?:\d{4}[\s-]?){3}\d{1,4}\b/g, replacement: '[redacted-cc]', kind: 'credit-card' },
  { re: /\b\d{3}-\d{2}-\d{4}\b/g, replacement: '[redacted-ssn]', kind: 'us-ssn' },
  {
    re: /\b(?:25[0-5]|2[0-4]\d|[01]?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|[01]?\d?\d)){3}\b/g,
    replacement: '[redacted-ip]',
    kind: 'ipv4'
  }
]
/**
 * Every pattern above needs a digit or an `@`: a text with neither is told apart by one scan,
 * not five (most messages and replies hold no number at all).
 */
const PII_CLUE = /[\d@]/

/**
 * Requests: PII is replaced by `[redacted-<kind>]` tokens (Transform) or, in `block` mode, denied.
 * Responses: the bytes are already on the wire, so both modes deny (early termination).
 */
export class PiiRedactionPolicy implements GovernancePolicy {
  readonly className = 'PiiRedactionPolicy'
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly block: boolean
  ) {}

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase === 'POST_RESPONSE') {
      const text = ctx.accumulatedResponse
      if (typeof text !== 'string' || !PII_CLUE.test(text)) return ADMIT
      const kinds: string[] = []
      for (const p of PII) {
        p.re.lastIndex = 0
        if (p.re.test(text)) kinds.push(p.kind)
      }
      return kinds.length === 0 ? ADMIT : deny(`response contains PII of kinds: ${listText(kinds)}`)
    }
    const msg = ctx.request.message
    if (typeof msg !== 'string' || !PII_CLUE.test(msg)) return ADMIT
    let redacted = msg
    const kinds: string[] = []
    for (const p of PII) {
      p.re.lastIndex = 0
      if (!p.re.test(redacted)) continue
      kinds.push(p.kind)
      p.re.lastIndex = 0
      redacted = redacted.replace(p.re, p.replacement)
    }
    if (kinds.length === 0) return ADMIT
    if (this.block) return deny(`request contains PII of kinds: ${listText(kinds)}`)
    return transform({ ...ctx.request, message: redacted }, `redacted PII of kinds: ${listText(kinds)}`)
  }
}

export function piiRedactionFactory(d: PolicyDescriptor): GovernancePolicy {
  const mode = asString(d.config.mode, 'redact').toLowerCase()
  if (mode !== 'redact' && mode !== 'block')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: `pii-redaction 'mode' must be 'redact' or 'block', got: ${mode}`
    })
  return new PiiRedactionPolicy(d.name, d.source, d.version, mode === 'block')
}

const DEFAULT_BUCKET = '__default__'
const MAX_TENANTS = 10_000
const WINDOW_MS = 30 * 24 * 3600 * 1000

/**
 * Per-tenant spend ceiling. The tenant is metadata `business.tenant.id` (else a shared default
 * bucket); spend is reported by `addCost` or by a post-response request carrying numeric
 * metadata `cost_usd`. Budget 0 disables enforcement; spend rolls over every 30 days.
 */
export class CostCeilingPolicy implements GovernancePolicy {
  readonly className = 'CostCeilingPolicy'
  private readonly spentBy = new Map<string, number>()
  private windowStart: number

  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly budgetUsd: number,
    private readonly now: () => number = Date.now
  ) {
    this.windowStart = now()
  }

  evaluate(ctx: PolicyContext): PolicyDecision {
    const tenant = tenantOf(ctx.request.metadata['business.tenant.id'])
    if (ctx.phase === 'POST_RESPONSE') {
      const c = ctx.request.metadata.cost_usd
      if (typeof c === 'number') this.addCost(tenant, c)
      return ADMIT
    }
    if (this.budgetUsd === 0) return ADMIT
    this.rollover()
    const bucket = this.bucketFor(tenant)
    const spent = this.spentBy.get(bucket) ?? 0
    if (spent >= this.budgetUsd)
      return deny(
        `cost ceiling reached for tenant ${bucket} (spent ${spent.toFixed(4)} of budget ${doubleText(this.budgetUsd)})`
      )
    return ADMIT
  }

  addCost(tenant: string | null, cost: number): void {
    if (!(cost > 0)) return
    this.rollover()
    const b = this.bucketFor(tenantOf(tenant))
    this.spentBy.set(b, (this.spentBy.get(b) ?? 0) + cost)
  }

  spent(tenant: string | null): number {
    return this.spentBy.get(tenantOf(tenant)) ?? 0
  }

  private bucketFor(tenant: string): string {
    if (tenant === DEFAULT_BUCKET || this.spentBy.has(tenant)) return tenant
    return this.spentBy.size >= MAX_TENANTS ? DEFAULT_BUCKET : tenant
  }

  private rollover(): void {
    const t = this.now()
    if (t - this.windowStart > WINDOW_MS) {
      this.spentBy.clear()
      this.windowStart = t
    }
  }
}

const tenantOf = (v: unknown): string => (typeof v === 'string' && v.trim() !== '' ? v : DEFAULT_BUCKET)

export function costCeilingFactory(d: PolicyDescriptor): GovernancePolicy {
  const budget = asNumber(d.config['budget-usd'], 0)
  if (!(budget >= 0))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: `budgetUsd must be >= 0, got ${budget}`
    })
  return new CostCeilingPolicy(d.name, d.source, d.version, budget)
}

/** Drift detector over response lengths: denies a response more than z standard deviations from the rolling mean. */
export class OutputLengthZScorePolicy implements GovernancePolicy {
  readonly className = 'OutputLengthZScorePolicy'
  private readonly window: number[] = []
  /** The window's sum and sum of squares, kept as lengths come and go while they stay exact integers. */
  private sum = 0
  private sumSq = 0
  /** True once a sum passed 2^53 (it may have rounded): the window is summed again until it is back below. */
  private rounded = false
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly windowSize: number,
    readonly zThreshold: number,
    readonly minSamples: number
  ) {}

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'POST_RESPONSE' || typeof ctx.accumulatedResponse !== 'string') return ADMIT
    const len = ctx.accumulatedResponse.length
    const w = this.window
    if (w.length < this.minSamples) {
      this.push(len)
      return ADMIT
    }
    // past 2^53 a sum rounds, and then only the sum in the window's order gives the same answer
    if (this.rounded) this.resum()
    const sum = this.sum
    const sumSq = this.sumSq
    const mean = sum / w.length
    const variance = sumSq / w.length - mean * mean
    const sd = variance > 0 ? Math.sqrt(variance) : 1
    const z = Math.abs((len - mean) / sd)
    this.push(len)
    while (w.length > this.windowSize) {
      const v = w.shift()!
      this.sum -= v
      this.sumSq -= v * v
    }
    if (this.sumSq > Number.MAX_SAFE_INTEGER) this.rounded = true
    if (z > this.zThreshold)
      return deny(
        `response length z-score ${z.toFixed(2)} exceeds threshold ${doubleText(this.zThreshold)} (possible drift)`
      )
    return ADMIT
  }

  /** Adds a length to the window (a string's length: an integer, so the sums stay exact below 2^53). */
  private push(len: number): void {
    this.window.push(len)
    this.sum += len
    this.sumSq += len * len
    if (this.sumSq > Number.MAX_SAFE_INTEGER) this.rounded = true
  }

  /** The window's sums from its lengths in order (the answer a sum per evaluation gave). */
  private resum(): void {
    let sum = 0
    let sumSq = 0
    for (const v of this.window) {
      sum += v
      sumSq += v * v
    }
    this.sum = sum
    this.sumSq = sumSq
    this.rounded = sumSq > Number.MAX_SAFE_INTEGER
  }
}

export function outputLengthZScoreFactory(d: PolicyDescriptor): GovernancePolicy {
  const windowSize = asInt(d.config['window-size'], 50)
  const z = asNumber(d.config['z-threshold'], 3.0)
  const minSamples = asInt(d.config['min-samples'], 10)
  if (windowSize < 2)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, { detail: 'windowSize must be >= 2' })
  if (!(z > 0))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, { detail: 'zScoreThreshold must be > 0' })
  if (minSamples < 2)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, { detail: 'minSamples must be >= 2' })
  return new OutputLengthZScorePolicy(d.name, d.source, d.version, windowSize, z, minSamples)
}
