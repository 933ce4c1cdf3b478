/** deny-list, allow-list and preference: phrase and regex screens over the message, response and tool arguments. */
import {
  PlatformError,
  admit,
  deny,
  prefer,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision,
  type PolicyDescriptor
} from '../../contracts/index.js'
import { GOVERNANCE_ERRORS } from '../errors.js'
import { anyMatch, asString, phrasePatterns } from './config.js'

const ADMIT = admit()
/** Characters of tool arguments screened before the deny-list gives up and denies. */
export const TOOL_ARGS_BUDGET = 1024 * 1024

const DENY_REQUEST = deny('deny-list: request matched a denied phrase')
const DENY_RESPONSE = deny('deny-list: response matched a denied phrase')
const DENY_TOOL = deny('deny-list: tool argument matched a denied phrase')
const DENY_BUDGET = deny('deny-list: tool arguments exceeded the screening budget')

abstract class Named {
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string
  ) {}
}

export class DenyListPolicy extends Named implements GovernancePolicy {
  readonly className = 'DenyListPolicy'
  constructor(
    d: PolicyDescriptor,
    readonly patterns: RegExp[]
  ) {
    super(d.name, d.source, d.version)
  }

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase === 'POST_RESPONSE') return this.hit(ctx.accumulatedResponse) ? DENY_RESPONSE : ADMIT
    if (this.hit(ctx.request.message)) return DENY_REQUEST
    const md = ctx.request.metadata
    if (md.tool_args === undefined && md.tool_args_preview === undefined) return ADMIT
    const budget = { left: TOOL_ARGS_BUDGET }
    for (const key of ['tool_args', 'tool_args_preview']) {
      const r = this.screen(md[key], budget, 0)
      if (r !== null) return r
    }
    return ADMIT
  }

  private hit(text: string | undefined | null): boolean {
    return typeof text === 'string' && text.trim() !== '' && anyMatch(this.patterns, text)
  }

  /** Walks keys and values; strings count against the budget so a huge argument cannot stall the loop. */
  private screen(v: unknown, budget: { left: number }, depth: number): PolicyDecision | null {
    if (v === undefined || v === null) return null
    if (depth > 64) return DENY_BUDGET
    if (typeof v === 'string') {
      budget.left -= v.length
      if (budget.left < 0) return DENY_BUDGET
      return this.hit(v) ? DENY_TOOL : null
    }
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')
      return this.screen(String(v), budget, depth)
    if (Array.isArray(v)) {
      for (const item of v) {
        const r = this.screen(item, budget, depth + 1)
        if (r !== null) return r
      }
      return null
    }
    if (typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        const rk = this.screen(k, budget, depth + 1)
        if (rk !== null) return rk
        const r = this.screen(item, budget, depth + 1)
        if (r !== null) return r
      }
    }
    return null
  }
}

const DENY_ALLOW_LIST = deny('allow-list: message matched no configured phrase')

export class AllowListPolicy extends Named implements GovernancePolicy {
  readonly className = 'AllowListPolicy'
  constructor(
    d: PolicyDescriptor,
    readonly patterns: RegExp[]
  ) {
    super(d.name, d.source, d.version)
  }

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    const m = ctx.request.message
    if (typeof m !== 'string' || m.trim() === '' || !anyMatch(this.patterns, m)) return DENY_ALLOW_LIST
    return ADMIT
  }
}

export class PreferencePolicy extends Named implements GovernancePolicy {
  readonly className = 'PreferencePolicy'
  private readonly decision: PolicyDecision
  constructor(
    d: PolicyDescriptor,
    readonly patterns: RegExp[],
    readonly preferred: string,
    readonly reason: string
  ) {
    super(d.name, d.source, d.version)
    this.decision = prefer(preferred, reason)
  }

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    const m = ctx.request.message
    return typeof m === 'string' && m.trim() !== '' && anyMatch(this.patterns, m) ? this.decision : ADMIT
  }
}

export const denyListFactory = (d: PolicyDescriptor): GovernancePolicy =>
  new DenyListPolicy(d, phrasePatterns('deny-list', d.config))
export const allowListFactory = (d: PolicyDescriptor): GovernancePolicy =>
  new AllowListPolicy(d, phrasePatterns('allow-list', d.config))
export function preferenceFactory(d: PolicyDescriptor): GovernancePolicy {
  const patterns = phrasePatterns('preference', d.config)
  const preferred = asString(d.config.prefer, '')
  if (preferred.trim() === '')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "preference requires a non-blank 'prefer' (the preferred alternative) under config"
    })
  const reason = asString(d.config.reason, '')
  if (reason.trim() === '')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "preference requires a non-blank 'reason' under config"
    })
  return new PreferencePolicy(d, patterns, preferred, reason)
}
