/**
 * One dispatch of a fleet agent: the coordinator's fleet is checked (cycle, unknown agent), the
 * interceptors decide, then the agent's transport runs it under the ref's timeout, retries with
 * exponential backoff and circuit breaker. Every dispatch is journaled (Dispatched, then
 * Completed or Failed under it), announced on the bus and, when commitment records are on,
 * committed (the gate's outcome, started, completed or failed). It never throws.
 */
import { performance } from 'node:perf_hooks'
import type { EventBus } from '../events/index.js'
import type { Logger } from '../observability/index.js'
import { failedResult } from '../contracts/index.js'
import { Cancellation, Deadlines } from '../plugins/index.js'
import type { AiCancelSignal } from '../ai/index.js'
import { recordedEventFields } from '../governance/index.js'
import { type CommitmentLog, type CommitmentOutcome } from '../contracts/index.js'
import type { CircuitBreakers, CircuitChange } from './circuit-breakers.js'
import type { FleetRegistry } from './fleet-registry.js'
import type { AgentCall, AgentResult, AgentTransport, DispatchContext, FleetDispatcher } from './fleet-types.js'
import type { FleetInterceptors } from './interceptors.js'
import type { JournalWriter } from './journal-writer.js'
import { dispatchPatterns } from './fleet-patterns.js'

/** A ref's `timeoutMs: 0`. */
export const DEFAULT_TIMEOUT_MS = 120_000
export const BACKOFF_BASE_MS = 100
export const CANCELLED = "Cancelled: the coordinator's turn ended"
/** The commitment records of a dispatch when none are kept. */
const NO_COMMITS: Pick<Commits, 'add'> = { add: () => {} }
/** Where a circuit change goes when the ref has no breaker (none happens). */
const NO_CHANGE = (): void => {}
/** Why an attempt's own cancellation fires once the attempt is over (it stops what the agent left running). */
const SETTLED = 'the call ended'
const ONCE = { once: true }

/** What `run` made of a call: its result and, once the agent was called, how many times it was. */
interface Ran {
  result: AgentResult
  attempts: number | undefined
}

export interface DispatcherDeps {
  registry: FleetRegistry
  interceptors: FleetInterceptors
  journal: JournalWriter
  bus: EventBus
  local: AgentTransport
  /** The transport of an agent this platform does not host (A2A), if one is registered. */
  remote: (agent: string) => AgentTransport | undefined
  commitments: () => CommitmentLog | undefined
  breakers: CircuitBreakers
  logger: Logger
}

/** Why a cancelled signal was cancelled: a string reason is said as it is. */
export function cancelText(signal: AiCancelSignal | undefined): string {
  const reason = (signal as { reason?: unknown } | undefined)?.reason
  return typeof reason === 'string' ? reason : CANCELLED
}

const aborted = (ctx: DispatchContext): boolean => ctx.signal?.aborted === true

function sleep(ms: number, signal: AiCancelSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

export class Dispatcher implements FleetDispatcher {
  private readonly patterns: Pick<FleetDispatcher, 'parallel' | 'pipeline' | 'vote'>
  /**
   * The attempts' time limits, one timer per timeout length instead of a setTimeout and a
   * clearTimeout per attempt (a tenth of the dispatch's own CPU in a profile).
   */
  private readonly limits = new Map<number, Deadlines<() => void>>()

  constructor(private readonly d: DispatcherDeps) {
    this.patterns = dispatchPatterns(d.journal, (ctx, call) => this.call(ctx, call))
  }

  parallel(ctx: DispatchContext, calls: AgentCall[]): Promise<Record<string, AgentResult>> {
    return this.patterns.parallel(ctx, calls)
  }

  pipeline(ctx: DispatchContext, calls: AgentCall[]): Promise<AgentResult[]> {
    return this.patterns.pipeline(ctx, calls)
  }

  vote(ctx: DispatchContext, calls: AgentCall[]): Promise<AgentResult> {
    return this.patterns.vote(ctx, calls)
  }

  async call(ctx: DispatchContext, raw: AgentCall): Promise<AgentResult> {
    const call: AgentCall = { agent: raw.agent, skill: raw.skill || 'run', args: raw.args ?? {} }
    const t0 = performance.now()
    const { journal, bus } = this.d
    const dispatched = journal.emit(ctx.coordinationId, ctx.parentEventId ?? null, 'AgentDispatched', {
      agentName: call.agent,
      skill: call.skill
    })
    bus.emit('AgentDispatched', { coordinationId: ctx.coordinationId, agentName: call.agent, skill: call.skill })
    ctx.activity?.('executing', { coordinationId: ctx.coordinationId, agent: call.agent, skill: call.skill })
    // without commitment records there is nothing to chain and nothing to wait for
    const log = this.d.commitments()
    const commits = log === undefined ? NO_COMMITS : new Commits(this.d, log, ctx, call, dispatched)
    let ran: Ran
    try {
      ran = await this.run(ctx, call, dispatched, commits)
    } catch (err) {
      this.d.logger.error({ err, agent: call.agent }, 'fleet dispatch failed unexpectedly')
      ran = refused(call, `Dispatch failed: ${err instanceof Error ? err.message : String(err)}`)
    }
    const { attempts } = ran
    let result = ran.result
    // a call refused before its agent ran (unknown agent, denied, circuit open) took no time
    const durationMs = attempts !== undefined && attempts > 0 ? Math.round(performance.now() - t0) : 0
    const ended = result.success
      ? journal.emit(ctx.coordinationId, dispatched, 'AgentCompleted', {
          agentName: call.agent,
          skill: result.skillId,
          durationMs
        })
      : journal.emit(ctx.coordinationId, dispatched, 'AgentFailed', {
          agentName: call.agent,
          skill: result.skillId,
          error: result.text,
          durationMs
        })
    // the journal event that ends the call: what an evaluation of its answer hangs under. One copy
    // of the result and of its metadata, filled in place: a spread that adds a key went to V8's
    // slow path
    const metadata = Object.assign({}, result.metadata)
    if (attempts !== undefined) metadata.attempts = attempts
    metadata.eventId = ended
    result = Object.assign({}, result)
    result.durationMs = durationMs
    result.metadata = metadata
    bus.emit('AgentCompleted', {
      coordinationId: ctx.coordinationId,
      agentName: call.agent,
      skill: result.skillId,
      duration: durationMs,
      success: result.success
    })
    ctx.activity?.(
      result.success ? 'completed' : 'failed',
      result.success ? { agent: call.agent, durationMs } : { agent: call.agent, error: result.text }
    )
    if (commits instanceof Commits) await commits.done()
    return result
  }

  private async run(
    ctx: DispatchContext,
    call: AgentCall,
    dispatched: string,
    commits: Pick<Commits, 'add'>
  ): Promise<Ran> {
    const { registry } = this.d
    const coordinator = registry.coordinator(ctx.coordinator)
    if (coordinator === undefined) return refused(call, `No coordinator named '${ctx.coordinator}'`)
    if (coordinator.unavailable !== undefined) return refused(call, coordinator.unavailable)
    const ref = coordinator.byName.get(call.agent)
    if (ref === undefined)
      return refused(
        call,
        `No agent named '${call.agent}' in fleet. Available: [${coordinator.refs.map((r) => r.name).join(', ')}]`
      )
    if (ctx.signal?.aborted === true) return refused(call, cancelText(ctx.signal))
    const answer = this.d.interceptors.run(call, ctx)
    const verdict = answer instanceof Promise ? await answer : answer
    commits.add(verdict.outcome, verdict.outcome === 'deny' ? call.args : verdict.call.args)
    if (verdict.outcome === 'deny') return refused(call, `fleet-interceptor denied: ${verdict.reason}`)
    const admitted = verdict.call
    const transport = registry.agent(call.agent) !== undefined ? this.d.local : this.d.remote(call.agent)
    if (transport === undefined) return refused(call, `Agent '${call.agent}' is not available (not loaded)`)
    // only a breaker changes state: without one there is nothing to journal
    const change = ref.circuitBreaker
      ? (c: CircuitChange): void => {
          journal(this.d, ctx, dispatched, c, call.agent)
        }
      : NO_CHANGE
    const maxAttempts = 1 + ref.maxRetries
    const timeoutMs = ref.timeoutMs === 0 ? DEFAULT_TIMEOUT_MS : ref.timeoutMs
    commits.add('started', admitted.args)
    let result: AgentResult | undefined
    let attempts = 0
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (ref.circuitBreaker && !this.d.breakers.allow(ctx.coordinator, call.agent, change)) {
        ctx.activity?.('circuit-open', { agent: call.agent })
        result = failedResult(admitted, 'Circuit breaker open')
        break
      }
      attempts++
      result = await attemptOnce(transport, admitted, ctx, timeoutMs, this.limit(timeoutMs))
      // a call the coordinator (or a failing sibling) cancelled says nothing about the agent
      if (aborted(ctx)) {
        this.d.breakers.abandon(ctx.coordinator, call.agent)
        break
      }
      this.d.breakers.record(ctx.coordinator, call.agent, result.success, ref.circuitBreaker, change)
      if (result.success || attempt === maxAttempts) break
      ctx.activity?.('retrying', { agent: call.agent, attempt: attempt + 1, maxAttempts })
      this.d.journal.emit(ctx.coordinationId, dispatched, 'AgentActivityChanged', {
        agentName: call.agent,
        activityType: 'retrying',
        detail: `attempt ${attempt + 1} of ${maxAttempts} after: ${result.text}`
      })
      await sleep(BACKOFF_BASE_MS * 2 ** (attempt - 1), ctx.signal)
      if (aborted(ctx)) {
        result = failedResult(admitted, cancelText(ctx.signal))
        break
      }
    }
    // maxRetries is never negative: the loop ran at least once
    const ended = result ?? failedResult(admitted, 'not run')
    commits.add(ended.success ? 'completed' : 'failed', admitted.args)
    return { result: ended, attempts }
  }

  private limit(timeoutMs: number): Deadlines<() => void> {
    let limit = this.limits.get(timeoutMs)
    if (limit === undefined) {
      limit = new Deadlines<() => void>(timeoutMs, callIt, true)
      this.limits.set(timeoutMs, limit)
    }
    return limit
  }
}

const callIt = (fn: () => void): void => {
  fn()
}

/** A call refused before its agent was called. */
const refused = (call: AgentCall, text: string): Ran => ({ result: failedResult(call, text), attempts: undefined })

function journal(d: DispatcherDeps, ctx: DispatchContext, parent: string, c: CircuitChange, agent: string): void {
  d.journal.emit(ctx.coordinationId, parent, 'CircuitStateChanged', { agentName: agent, ...c })
}

/**
 * One try under `timeoutMs`; the coordinator's cancel (or a sibling's failure) ends it at once.
 * Whichever of the answer, the timeout and the cancel comes first settles it (one promise, not
 * a race of three).
 */
function attemptOnce(
  transport: AgentTransport,
  call: AgentCall,
  ctx: DispatchContext,
  timeoutMs: number,
  limit: Deadlines<() => void>
): Promise<AgentResult> {
  const parent = ctx.signal
  if (parent?.aborted === true) return Promise.resolve(failedResult(call, cancelText(parent)))
  const own = new Cancellation()
  return new Promise<AgentResult>((resolve) => {
    let done = false
    const finish = (r: AgentResult): void => {
      if (done) return
      done = true
      limit.delete(expire)
      parent?.removeEventListener('abort', onParent)
      // a string reason: an abort without one builds a DOMException, a tenth of a dispatch's CPU
      own.abort(SETTLED)
      resolve(r)
    }
    const onParent = (): void => {
      own.abort(cancelText(parent))
      finish(failedResult(call, cancelText(parent)))
    }
    const expire = (): void => {
      own.abort(`Agent timed out after ${timeoutMs}ms`)
      finish(failedResult(call, `Agent timed out after ${timeoutMs}ms`))
    }
    parent?.addEventListener('abort', onParent, ONCE)
    limit.add(expire)
    // the context with the attempt's own signal, filled in place (a spread that adds a key is slow)
    const attemptCtx = Object.assign({}, ctx)
    attemptCtx.signal = own
    let answer: Promise<AgentResult>
    try {
      answer = transport.call(call, attemptCtx)
    } catch (err) {
      // a transport that throws instead of rejecting fails the dispatch, as before the attempt
      done = true
      limit.delete(expire)
      parent?.removeEventListener('abort', onParent)
      own.abort(SETTLED)
      throw err
    }
    answer.then(finish, (err: unknown) => finish(failedResult(call, err instanceof Error ? err.message : String(err))))
  })
}

/**
 * The commitment records of one dispatch, kept in order (gate, started, completed or failed),
 * each journaled as CommitmentRecorded under the dispatch. A failed record is logged; the
 * dispatch goes on.
 */
class Commits {
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly d: DispatcherDeps,
    private readonly log: CommitmentLog,
    private readonly ctx: DispatchContext,
    private readonly call: AgentCall,
    private readonly parent: string
  ) {}

  add(outcome: CommitmentOutcome, args: Record<string, unknown>): void {
    const log = this.log
    const { ctx, call, d } = this
    this.chain = this.chain.then(async () => {
      try {
        const record = await log.record({
          coordinationId: ctx.coordinationId,
          issuer: `coordinator:${ctx.coordinator}`,
          principal: ctx.principal,
          subject: call.agent,
          scope: call.skill,
          outcome,
          properties: args
        })
        d.journal.emit(ctx.coordinationId, this.parent, 'CommitmentRecorded', recordedEventFields(record))
      } catch (err) {
        d.logger.error({ err, agent: call.agent, outcome }, 'fleet: a commitment record failed')
      }
    })
  }

  done(): Promise<void> {
    return this.chain
  }
}
