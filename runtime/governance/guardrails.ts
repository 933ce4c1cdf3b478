/**
 * Guardrails (the AI pipeline's request and response inspectors) and the two adapters between
 * guardrails and policies: GuardrailAsPolicy exposes a guardrail as a policy, PolicyAsGuardrail a
 * policy as a guardrail. Guardrails registered with the service run before every policy.
 */
import {
  admit,
  deny,
  transform,
  type AiRequest,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision
} from '../contracts/index.js'

export type GuardrailResult =
  { result: 'pass' } | { result: 'modify'; request: AiRequest } | { result: 'block'; reason: string }

export interface AiGuardrail {
  readonly name: string
  inspectRequest?(request: AiRequest): GuardrailResult | Promise<GuardrailResult>
  inspectResponse?(accumulatedResponse: string, request: AiRequest): GuardrailResult | Promise<GuardrailResult>
}

const ADMIT = admit()

function toDecision(r: GuardrailResult): PolicyDecision {
  switch (r.result) {
    case 'pass':
      return ADMIT
    case 'modify':
      return transform(r.request)
    case 'block':
      return deny(r.reason)
  }
}

export class GuardrailAsPolicy implements GovernancePolicy {
  readonly className: string
  constructor(
    readonly guardrail: AiGuardrail,
    readonly name = guardrail.name,
    readonly source = `code:${guardrail.name}`,
    readonly version = '1'
  ) {
    this.className = `GuardrailAsPolicy(${guardrail.name})`
  }

  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    const g = this.guardrail
    const r =
      ctx.phase === 'PRE_ADMISSION'
        ? g.inspectRequest?.(ctx.request)
        : g.inspectResponse?.(ctx.accumulatedResponse, ctx.request)
    if (r === undefined) return ADMIT
    return r instanceof Promise ? r.then(toDecision) : toDecision(r)
  }
}

/** Deny → block, Transform → modify (request side only), Admit and Prefer → pass. */
function toResult(d: PolicyDecision, phase: PolicyContext['phase']): GuardrailResult {
  switch (d.decision) {
    case 'deny':
      return { result: 'block', reason: d.reason }
    case 'transform':
      return phase === 'PRE_ADMISSION' ? { result: 'modify', request: d.request } : { result: 'pass' }
    default:
      return { result: 'pass' }
  }
}

export class PolicyAsGuardrail implements AiGuardrail {
  constructor(readonly policy: GovernancePolicy) {}
  get name(): string {
    return this.policy.name
  }

  inspectRequest(request: AiRequest): GuardrailResult | Promise<GuardrailResult> {
    return this.run({ phase: 'PRE_ADMISSION', request, accumulatedResponse: '' })
  }

  inspectResponse(accumulatedResponse: string, request: AiRequest): GuardrailResult | Promise<GuardrailResult> {
    return this.run({ phase: 'POST_RESPONSE', request, accumulatedResponse })
  }

  /** A throwing policy blocks (fail closed), as at every other seam. */
  private run(ctx: PolicyContext): GuardrailResult | Promise<GuardrailResult> {
    let d: PolicyDecision | Promise<PolicyDecision>
    try {
      d = this.policy.evaluate(ctx)
    } catch (err) {
      return { result: 'block', reason: (err as Error).message }
    }
    if (d instanceof Promise)
      return d.then(
        (v) => toResult(v, ctx.phase),
        (err: unknown) => ({ result: 'block', reason: (err as Error).message })
      )
    return toResult(d, ctx.phase)
  }
}
