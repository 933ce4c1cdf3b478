import {
  isPromise,
  type AiRequest,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision
} from '../contracts/index.js'
import type { ScopeConfig, ScopeGuardrail, ScopeVerdict } from './contract.js'
import type { ScopeRuntime } from './scope-runtime.js'

/** Metadata key carrying the redirect text on a breach rewritten by Transform. */
export const REDIRECT_METADATA_KEY = 'platform.scope.redirect'

const ADMIT: PolicyDecision = Object.freeze({ decision: 'admit' })

/**
 * A scope guardrail wrapped as a GovernancePolicy (rule 6 of docs/scope.md). Pre-admission: IN_SCOPE
 * admits; OUT_OF_SCOPE with DENY denies with the reason, with POLITE_REDIRECT or CUSTOM_MESSAGE
 * transforms (the message becomes the redirect text, also set as `platform.scope.redirect`);
 * ERROR denies with `scope check errored: `; a throwing guardrail denies with `scope check failed: `.
 * Post-response (only with postResponseCheck): the response is classified the same way, only an
 * OUT_OF_SCOPE verdict denies (`post-response: `); errors admit, the bytes are already out (rule 5).
 * Requests for another agent, and MCP tool calls (metadata `action: call_tool`), pass untouched.
 * Rule-based scopes answer synchronously.
 */
export class ScopePolicy implements GovernancePolicy {
  readonly className = 'ScopePolicy'
  private recorder: ((decision: string, similarity: number) => void) | undefined
  private built: string | undefined

  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly config: ScopeConfig,
    /** The agent id this scope confines; null confines every request. */
    readonly agent: string | null,
    private readonly guardrail: ScopeGuardrail,
    private readonly runtime: ScopeRuntime
  ) {
    if (guardrail.tier() !== config.tier)
      throw new Error(`guardrail tier ${guardrail.tier()} does not match config tier ${config.tier}`)
  }

  /** Bound on first use: a policy built before its platform was installed still counts there. */
  private record(decision: string, similarity: number): void {
    if (this.recorder === undefined) {
      const m = this.runtime.metrics
      if (m === undefined) return
      this.recorder = m.forPolicy(this.name, this.config.tier)
    }
    this.recorder(decision, similarity)
  }

  /**
   * This scope's preamble block as `build` makes it from the config: built once when the config
   * is frozen (as parsed configs are, their topics too), since its wording is the same on every
   * turn; built anew each time from a config that may change. The preamble is its one caller.
   */
  block(build: (config: ScopeConfig) => string): string {
    if (this.built !== undefined) return this.built
    const text = build(this.config)
    if (Object.isFrozen(this.config) && Object.isFrozen(this.config.forbiddenTopics)) this.built = text
    return text
  }

  appliesTo(agentId: string | null | undefined): boolean {
    return this.agent === null || agentId === this.agent
  }

  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    if (this.config.unrestricted || (this.agent !== null && ctx.request.agentId !== this.agent)) return ADMIT
    // a scope confines conversation turns; MCP tool calls (`call_tool:<name>`) are governed by tool policies
    if (ctx.request.metadata?.action === 'call_tool') return ADMIT
    return ctx.phase === 'POST_RESPONSE' ? this.postResponse(ctx) : this.preAdmission(ctx.request)
  }

  private preAdmission(request: AiRequest): PolicyDecision | Promise<PolicyDecision> {
    let v: ScopeVerdict | Promise<ScopeVerdict>
    try {
      v = this.guardrail.evaluate(request, this.config)
    } catch (err) {
      return this.threw(err)
    }
    if (isPromise(v))
      return v.then(
        (x) => this.mapPre(request, x),
        (err) => this.threw(err)
      )
    return this.mapPre(request, v)
  }

  private mapPre(request: AiRequest, v: ScopeVerdict): PolicyDecision {
    switch (v?.outcome) {
      case 'IN_SCOPE':
        this.record('admit', v.similarity)
        return ADMIT
      case 'OUT_OF_SCOPE': {
        const d = this.breach(request, v)
        this.record(d.decision, v.similarity)
        return d
      }
      case 'ERROR':
        this.record('error', Number.NaN)
        return { decision: 'deny', reason: `scope check errored: ${v.reason}` }
      default:
        this.record('error', Number.NaN)
        return { decision: 'deny', reason: 'scope check errored: the guardrail returned no verdict' }
    }
  }

  private threw(err: unknown): PolicyDecision {
    this.record('error', Number.NaN)
    const msg = err instanceof Error ? err.message : String(err)
    this.runtime.logger.error(
      { policy: this.name, tier: this.config.tier, err: msg },
      'Scope guardrail threw during pre-admission: fail closed'
    )
    return { decision: 'deny', reason: `scope check failed: ${msg}` }
  }

  private breach(request: AiRequest, v: ScopeVerdict): PolicyDecision {
    const reason = v.reason === '' ? 'request falls outside endpoint scope' : v.reason
    this.runtime.logger.warn(
      { policy: this.name, tier: this.config.tier, similarity: v.similarity },
      `Scope breach on policy '${this.name}': ${reason}`
    )
    if (this.config.onBreach === 'DENY') return { decision: 'deny', reason }
    const redirect = this.config.redirectMessage
    return {
      decision: 'transform',
      request: { ...request, message: redirect, metadata: { ...request.metadata, [REDIRECT_METADATA_KEY]: redirect } },
      reason: `redirected: ${reason}`
    }
  }

  private postResponse(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision> {
    if (!this.config.postResponseCheck) return ADMIT
    const response = ctx.accumulatedResponse
    if (typeof response !== 'string' || response.trim() === '') return ADMIT
    let v: ScopeVerdict | Promise<ScopeVerdict>
    try {
      v = this.guardrail.evaluate({ ...ctx.request, message: response }, this.config)
    } catch (err) {
      return this.postThrew(err)
    }
    if (isPromise(v))
      return v.then(
        (x) => this.mapPost(x),
        (err) => this.postThrew(err)
      )
    return this.mapPost(v)
  }

  private mapPost(v: ScopeVerdict): PolicyDecision {
    if (v?.outcome !== 'OUT_OF_SCOPE') return ADMIT
    this.record('deny', v.similarity)
    const reason = v.reason === '' ? 'response drifted outside endpoint scope' : v.reason
    this.runtime.logger.warn(
      { policy: this.name, tier: this.config.tier, similarity: v.similarity },
      `Scope post-response breach on policy '${this.name}': ${reason}`
    )
    return { decision: 'deny', reason: `post-response: ${reason}` }
  }

  private postThrew(err: unknown): PolicyDecision {
    this.runtime.logger.error(
      { policy: this.name, err: err instanceof Error ? err.message : String(err) },
      'Scope guardrail threw during post-response: admitting (bytes already on the wire)'
    )
    return ADMIT
  }
}
