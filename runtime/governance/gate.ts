/**
 * PolicyAdmissionGate: runs the chain for one request and records every evaluation (decision
 * log, span, deny log line). Synchronous policies are evaluated without a single await; the
 * first policy answering with a promise (a plugin type in its sandbox) switches the rest of the
 * run to async. A throwing policy, or one returning something that is not a decision, denies.
 */
import type { Logger } from 'pino'
// the module's binding, not the global: the global `performance` is a getter that runs on every read
import { performance } from 'node:perf_hooks'
import { trace, ProxyTracerProvider, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api'
import {
  isPlatformError,
  isPromise,
  isoNow,
  type AiRequest,
  type DecisionEntry,
  type DecisionValue,
  type Phase,
  type PolicyContext,
  type PolicyDecision
} from '../contracts/index.js'
import { snapshotOf } from './audit-entry.js'
import { ChainSlots, PolicySlot } from './policy-slot.js'
import type { GovernanceDecisionLog } from './decision-log.js'
import type { PolicyChain } from './chain.js'
import { GOVERNANCE_ERRORS } from './errors.js'
import { errorDecision, isAdmit, validate } from './decision-shape.js'

export interface PolicyIdentity {
  name: string
  source: string
  version: string
}
export interface Preference extends PolicyIdentity {
  preferred: string
  reason: string
}

export type Admission =
  | { admitted: true; request: AiRequest; preferences: Preference[] }
  | {
      admitted: false
      reason: string
      policy: PolicyIdentity
      /** True when the denying policy threw (or answered no decision) rather than denied. */
      failed?: boolean
    }

/** Policies holding per-turn state (concurrency-limit) release it when a later policy denies the turn. */
interface Abandonable {
  abandon(ctx: PolicyContext): void
}
const isAbandonable = (p: unknown): p is Abandonable => typeof (p as Abandonable).abandon === 'function'

export const SPAN_NAME = 'governance.policy.evaluate'

interface Run {
  resource: string
  ctx: PolicyContext
  policies: readonly PolicySlot[]
  preferences: Preference[]
  denied: { reason: string; policy: PolicyIdentity; failed: boolean } | null
  snapshot: Record<string, unknown> | null
  /** One ISO timestamp per run: formatting a Date per entry costs more than most policies. */
  timestamp: string | null
  /** Post-response runs evaluate every policy (stateful ones see the end of the turn); the first deny wins. */
  runAll: boolean
  /** A single call, not a turn: no post-response follows, so per-turn state is given back on admission too. */
  once: boolean
  /** False while no tracing SDK is registered: the run starts no (no-op) spans. */
  traced: boolean
  /**
   * Evaluations decided but not yet in the decision log, oldest first: they are recorded once
   * the synchronous stretch of the chain ends, so one clock reading ends a policy's time and
   * starts the next one's. Each holds null, or `{ preferred }` for a Prefer, as its snapshot
   * until then.
   */
  pending: DecisionEntry[]
  /** How many of `pending` are recorded already. */
  recorded: number
}

/**
 * Whether spans are traced: true once an SDK registered a tracer provider; until then every span
 * is a no-op. The answer is worked out again only when the global provider or its delegate
 * changes, not by reading the delegate's constructor name on every run.
 */
class TracingProbe {
  private provider: unknown
  private delegate: unknown
  private tracing = false

  on(): boolean {
    const provider = trace.getTracerProvider()
    if (!(provider instanceof ProxyTracerProvider)) return true
    const delegate = provider.getDelegate()
    if (provider !== this.provider || delegate !== this.delegate) {
      this.provider = provider
      this.delegate = delegate
      this.tracing = delegate.constructor.name !== 'NoopTracerProvider'
    }
    return this.tracing
  }
}

export class PolicyAdmissionGate {
  private readonly tracing = new TracingProbe()
  private readonly tracer: Tracer = trace.getTracer('agent-platform.governance')
  private readonly slots = new ChainSlots()

  /** Told of every evaluation (metrics); set by the installer. */
  observer: ((policy: string, decision: DecisionValue) => void) | undefined

  constructor(
    private readonly chain: PolicyChain,
    private readonly log: GovernanceDecisionLog | undefined,
    private readonly logger: Logger
  ) {}

  /** True while no policy (kill switches included) is loaded: every admission would admit unchanged. */
  get empty(): boolean {
    return this.chain.policies.length === 0 && this.chain.killSwitches.length === 0
  }

  /** Pre-admission: Admitted (with the possibly transformed request) or Denied. */
  admit(resource: string, request: AiRequest): Admission | Promise<Admission> {
    return this.start(resource, 'PRE_ADMISSION', request, '')
  }

  /**
   * Pre-admission of something that has no post-response phase (a tool call): what policies
   * hold per turn, such as a concurrency slot, is given back as soon as the verdict is known.
   */
  admitOnce(resource: string, request: AiRequest): Admission | Promise<Admission> {
    return this.start(resource, 'PRE_ADMISSION', request, '', true)
  }

  /** Post-response over the accumulated response; a Transform here is logged and treated as Admit. */
  afterResponse(resource: string, request: AiRequest, response: string): Admission | Promise<Admission> {
    return this.start(resource, 'POST_RESPONSE', request, response)
  }

  private start(
    resource: string,
    phase: Phase,
    request: AiRequest,
    response: string,
    once = false
  ): Admission | Promise<Admission> {
    const armed = armedSwitch(this.chain.killSwitches)
    const all = this.slots.of(this.chain.policies)
    // an armed kill switch answers first, so every admission carries the arm reason; after a
    // response the rest still run (runAll) so per-turn state such as concurrency slots is released
    let policies = all
    if (armed !== undefined) {
      const first = all.find((s) => s.policy === armed) ?? new PolicySlot(armed)
      policies = phase === 'PRE_ADMISSION' ? [first] : [first, ...all.filter((s) => s !== first)]
    }
    const run: Run = {
      resource,
      ctx: { phase, request, accumulatedResponse: response },
      policies,
      preferences: [],
      denied: null,
      snapshot: null,
      timestamp: null,
      runAll: phase === 'POST_RESPONSE',
      once,
      traced: this.tracing.on(),
      pending: [],
      recorded: 0
    }
    return this.from(run, 0)
  }

  private from(run: Run, i: number): Admission | Promise<Admission> {
    const ps = run.policies
    // a policy's time runs from the end of the previous one's: what is done between them (the
    // decision checked, the entry built) is a few property reads, and the log is written after
    let t0 = performance.now()
    for (; i < ps.length; i++) {
      const p = ps[i]!
      if (p.live) p.refresh()
      if (p.agent != null && p.agent !== run.ctx.request.agentId) continue
      const span = run.traced ? this.tracer.startSpan(SPAN_NAME) : undefined
      // a traced evaluation is recorded at once (its span ends with it): its time starts here
      if (span !== undefined) t0 = performance.now()
      let d: PolicyDecision | Promise<PolicyDecision>
      try {
        d = p.evaluate.call(p.policy, run.ctx)
      } catch (err) {
        const t1 = performance.now()
        const recorded = run.recorded
        const denied = this.settle(run, p, errorDecision(err), t1 - t0, span)
        // entries recorded just now (before a transform) took time that is not the next policy's
        t0 = run.recorded === recorded ? t1 : performance.now()
        if (denied && !run.runAll) return this.finish(run, i)
        continue
      }
      if (isPromise(d)) {
        // what the chain decided so far is in the log before anything waits; the time that takes
        // is not this policy's
        const before = performance.now()
        this.flush(run)
        const start = t0 + (performance.now() - before)
        const next = i + 1
        return Promise.resolve(d)
          .then(
            (v) => v,
            (err: unknown) => errorDecision(err)
          )
          .then((v) => {
            const stop = this.settle(run, p, v, performance.now() - start, span)
            return stop && !run.runAll ? this.finish(run, next - 1) : this.from(run, next)
          })
      }
      const t1 = performance.now()
      const recorded = run.recorded
      const denied = this.settle(run, p, d, t1 - t0, span)
      t0 = run.recorded === recorded ? t1 : performance.now()
      if (denied && !run.runAll) return this.finish(run, i)
    }
    return this.finish(run, ps.length)
  }

  /**
   * Records one evaluation; returns true when it denied. An untraced admit, most evaluations, is
   * recorded here, in a function small enough for the chain's loop to take inline (no call, no
   * boxed duration); every other decision in `settleAny`.
   */
  private settle(run: Run, p: PolicySlot, raw: unknown, elapsed: number, span: Span | undefined): boolean {
    if (span !== undefined || !isAdmit(raw)) return this.settleAny(run, p, raw, elapsed, span)
    this.observer?.(p.name, 'admit')
    if (this.log !== undefined) run.pending.push(pending(run, p, 'admit', '', Math.round(elapsed * 1000) / 1000, null))
    return false
  }

  private settleAny(run: Run, p: PolicySlot, raw: unknown, elapsed: number, span: Span | undefined): boolean {
    const ms = Math.round(elapsed * 1000) / 1000
    const phase = run.ctx.phase
    let value: DecisionValue
    let reason = ''
    let preferred: string | undefined
    const d = validate(raw)
    if (d === null) {
      value = 'error'
      reason = isPlatformError(raw, GOVERNANCE_ERRORS.POLICY_THREW)
        ? raw.message
        : 'policy returned an invalid decision'
    } else {
      switch (d.decision) {
        case 'admit':
          value = 'admit'
          break
        case 'deny':
          value = 'deny'
          reason = d.reason
          break
        case 'prefer':
          value = 'prefer'
          reason = d.reason
          preferred = d.preferred
          run.preferences.push({
            name: p.name,
            source: p.source,
            version: p.version,
            preferred: d.preferred,
            reason: d.reason
          })
          break
        case 'transform':
          if (phase === 'POST_RESPONSE') {
            this.logger.warn(
              { policy: p.name, source: p.source, version: p.version },
              `policy ${p.name} returned Transform after the response; ignored and treated as Admit`
            )
            value = 'admit'
            reason = 'post-response transform ignored'
          } else {
            value = 'transform'
            if (d.reason !== undefined) reason = d.reason
            // the evaluations before it saw the request it replaces: their snapshot is of that one
            this.flush(run)
            run.ctx = { ...run.ctx, request: d.request }
            run.snapshot = null
          }
          break
      }
    }
    const denied = value === 'deny' || value === 'error'
    if (span?.isRecording() === true) {
      span.setAttributes({
        'policy.name': p.name,
        'policy.source': p.source,
        'policy.version': p.version,
        'policy.phase': phase === 'PRE_ADMISSION' ? 'pre_admission' : 'post_response',
        'policy.decision': value,
        'policy.reason': reason
      })
      if (denied) span.setStatus({ code: SpanStatusCode.ERROR, message: reason })
    }
    span?.end()
    this.observer?.(p.name, value)
    if (this.log !== undefined) {
      run.pending.push(pending(run, p, value, reason, ms, preferred === undefined ? null : { preferred }))
      if (span !== undefined) this.flush(run)
    }
    if (!denied) return false
    if (run.denied === null) {
      run.denied = { reason, policy: { name: p.name, source: p.source, version: p.version }, failed: value === 'error' }
      this.logger.info(
        { policy: p.name, source: p.source, version: p.version, resource: run.resource, decision: value },
        `Request denied by policy ${p.name} (source=${p.source}, version=${p.version}): ${reason}`
      )
    }
    return true
  }

  /** Records the pending evaluations, each with the snapshot of the request it saw. */
  private flush(run: Run): void {
    const { pending } = run
    if (run.recorded === pending.length || this.log === undefined) return
    const snapshot = (run.snapshot ??= snapshotOf(run.ctx.phase, run.ctx.request, run.ctx.accumulatedResponse))
    for (let k = run.recorded; k < pending.length; k++) {
      const e = pending[k]!
      const prefer = e.context_snapshot as { preferred: string } | null
      e.context_snapshot = prefer === null ? snapshot : { ...snapshot, preferred: prefer.preferred }
      this.log.record(e)
    }
    run.recorded = pending.length
  }

  private finish(run: Run, stoppedAt: number): Admission {
    this.flush(run)
    if (run.denied === null) {
      if (run.once) this.abandon(run, stoppedAt)
      return { admitted: true, request: run.ctx.request, preferences: run.preferences }
    }
    // policies that admitted before the deny may hold per-turn state (a concurrency slot)
    if (run.ctx.phase === 'PRE_ADMISSION') this.abandon(run, stoppedAt)
    const { reason, policy, failed } = run.denied
    return failed ? { admitted: false, reason, policy, failed } : { admitted: false, reason, policy }
  }

  /** Gives back what the policies before `upTo` took for this run. */
  private abandon(run: Run, upTo: number): void {
    for (let j = 0; j < upTo; j++) {
      const p = run.policies[j]!.policy
      if (isAbandonable(p)) {
        try {
          p.abandon(run.ctx)
        } catch {
          /* best effort */
        }
      }
    }
  }
}

/** The first armed kill switch (a loop: a `find` callback is a closure made on every admission). */
function armedSwitch<P extends { armed: boolean }>(switches: readonly P[]): P | undefined {
  for (let i = 0; i < switches.length; i++) if (switches[i]!.armed) return switches[i]
  return undefined
}

/**
 * An evaluation's entry before the log has it: its snapshot null, or `{ preferred }` for a Prefer,
 * until the run's snapshot is taken (one literal for every decision, so every entry has one shape).
 */
function pending(
  run: Run,
  p: PolicySlot,
  decision: DecisionValue,
  reason: string,
  ms: number,
  prefer: { preferred: string } | null
): DecisionEntry {
  return {
    timestamp: (run.timestamp ??= isoNow()),
    policy_name: p.name,
    policy_source: p.source,
    policy_version: p.version,
    decision,
    reason,
    evaluation_ms: ms,
    context_snapshot: prefer as unknown as Record<string, unknown>
  }
}
