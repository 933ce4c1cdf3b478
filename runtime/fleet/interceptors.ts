/**
 * Fleet interceptors see every dispatch before its agent runs, in registration order: each may
 * let it proceed, rewrite the call (the next one sees the rewrite) or deny it (the rest are not
 * asked). A throwing interceptor denies: a gate that fails stays closed.
 */
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

  async run(call: AgentCall, ctx: DispatchContext): Promise<Verdict> {
    let current = call
    let rewritten = false
    for (const i of [...this.list]) {
      let d: InterceptDecision
      try {
        d = await i.before(current, ctx)
        if (d?.kind === 'rewrite') {
          current = checkedCall(d.call, current)
          rewritten = true
          continue
        }
      } catch (err) {
        return {
          outcome: 'deny',
          reason: `interceptor '${i.name}' failed: ${err instanceof Error ? err.message : String(err)}`
        }
      }
      if (d?.kind === 'deny') return { outcome: 'deny', reason: String(d.reason) }
      if (d?.kind !== 'proceed') return { outcome: 'deny', reason: `interceptor '${i.name}' returned no decision` }
    }
    return { outcome: rewritten ? 'transform' : 'admit', call: current }
  }
}
