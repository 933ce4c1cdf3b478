/**
 * Fleet interceptors see every dispatch before its agent runs, in registration order: each may
 * let it proceed, rewrite the call (the next one sees the rewrite) or deny it (the rest are not
 * asked). A throwing interceptor denies: a gate that fails stays closed.
 */
import { isPromise } from '../contracts/index.js'
import type { AgentCall, DispatchContext } from './fleet-types.js'

export type InterceptDecision =
  { kind: 'proceed' } | { kind: 'rewrite'; call: AgentCall } | { kind: 'deny'; reason: string }

export interface FleetInterceptor {
  readonly name: string
  before(call: AgentCall, ctx: DispatchContext): InterceptDecision | Promise<InterceptDecision>
}

export const proceed = (): InterceptDecision => ({ kind: 'proceed' })
export const rewrite = (call: AgentCall): InterceptDecision => ({ kind: 'rewrite', call })
export const deny = (reason: string): InterceptDecision => ({ kind: 'deny', reason })

/** What the chain made of a call: the gate's outcome as a commitment names it. */
export type Verdict = { outcome: 'admit' | 'transform'; call: AgentCall } | { outcome: 'deny'; reason: string }

function checkedCall(c: unknown, was: AgentCall): AgentCall {
  const x = c as Partial<AgentCall> | null
  if (
    x === null ||
    typeof x !== 'object' ||
    typeof x.agent !== 'string' ||
    typeof x.skill !== 'string' ||
    x.args === null ||
    typeof x.args !== 'object' ||
    Array.isArray(x.args)
  )
    throw new TypeError('rewrite() needs a call { agent, skill, args }')
  // a rewrite may change the skill and the args; the agent stays the one the gate was asked about
  if (x.agent !== was.agent) throw new TypeError(`a rewrite may not change the agent ('${was.agent}' to '${x.agent}')`)
  return { agent: x.agent, skill: x.skill, args: { ...x.args } }
}

export class FleetInterceptors {
  private readonly list: FleetInterceptor[] = []

  /** Adds an interceptor after those already registered; returns its removal. */
  add(interceptor: FleetInterceptor): () => void {
    this.list.push(interceptor)
    return () => {
      const i = this.list.indexOf(interceptor)
      if (i >= 0) this.list.splice(i, 1)
    }
  }

  names(): string[] {
    return this.list.map((i) => i.name)
  }

  /**
   * The chain's verdict; synchronous while every interceptor answers synchronously (the
   * governance interceptor with no policy loaded does), so a dispatch awaits no promise for it.
   */
  run(call: AgentCall, ctx: DispatchContext): Verdict | Promise<Verdict> {
    return this.from([...this.list], 0, call, false, ctx)
  }

  private from(
    list: readonly FleetInterceptor[],
    i: number,
    current: AgentCall,
    rewritten: boolean,
    ctx: DispatchContext
  ): Verdict | Promise<Verdict> {
    for (; i < list.length; i++) {
      const it = list[i]!
      let d: InterceptDecision | Promise<InterceptDecision>
      try {
        d = it.before(current, ctx)
      } catch (err) {
        return failed(it, err)
      }
      if (isPromise(d)) {
        const next = i + 1
        return Promise.resolve(d).then(
          (v) => {
            const r = decided(it, v, current)
            return 'outcome' in r ? r : this.from(list, next, r.call, rewritten || r.rewritten, ctx)
          },
          (err: unknown) => failed(it, err)
        )
      }
      const r = decided(it, d, current)
      if ('outcome' in r) return r
      current = r.call
      rewritten ||= r.rewritten
    }
    return { outcome: rewritten ? 'transform' : 'admit', call: current }
  }
}

/** A decision applied: the call to go on with, or the deny it comes to. */
function decided(
  it: FleetInterceptor,
  d: InterceptDecision,
  current: AgentCall
): { call: AgentCall; rewritten: boolean } | Extract<Verdict, { outcome: 'deny' }> {
  if (d?.kind === 'rewrite') {
    try {
      return { call: checkedCall(d.call, current), rewritten: true }
    } catch (err) {
      return failed(it, err)
    }
  }
  if (d?.kind === 'deny') return { outcome: 'deny', reason: String(d.reason) }
  if (d?.kind !== 'proceed') return { outcome: 'deny', reason: `interceptor '${it.name}' returned no decision` }
  return { call: current, rewritten: false }
}

function failed(it: FleetInterceptor, err: unknown): Extract<Verdict, { outcome: 'deny' }> {
  return {
    outcome: 'deny',
    reason: `interceptor '${it.name}' failed: ${err instanceof Error ? err.message : String(err)}`
  }
}
