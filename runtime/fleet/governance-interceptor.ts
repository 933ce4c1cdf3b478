/**
 * The fleet interceptor installed by default: the whole policy chain on every dispatch, its
 * decisions recorded in the decision log like any other. The request's message is
 * `skill + " " + args as JSON`, with `fleet.dispatch.agent` and `fleet.dispatch.skill` in its
 * metadata. When a policy transforms it, each string argument is run through the chain again
 * (`fleet.dispatch.arg` naming it) and the changed ones are rewritten; a deny there denies.
 */
import type { Platform } from '../platform.js'
import { aiRequest, type AiRequest } from '../contracts/index.js'
import { governanceOf, type Admission, type GovernanceService } from '../governance/index.js'
import type { AgentCall, DispatchContext } from './fleet-types.js'
import { deny, proceed, rewrite, type FleetInterceptor, type InterceptDecision } from './interceptors.js'

export const GOVERNANCE_INTERCEPTOR = 'governance'

/** The message policies see for a dispatch. */
export const dispatchMessage = (call: AgentCall): string => `${call.skill} ${JSON.stringify(call.args)}`

const refusal = (a: Extract<Admission, { admitted: false }>): InterceptDecision =>
  deny(a.failed === true ? `policy '${a.policy.name}' evaluation failed` : a.reason)

export function governanceInterceptor(platform: Platform): FleetInterceptor {
  return {
    name: GOVERNANCE_INTERCEPTOR,
    before(call: AgentCall, ctx: DispatchContext): InterceptDecision | Promise<InterceptDecision> {
      const gov = governanceOf(platform)
      // no policy loaded: answered at once, so the dispatch awaits nothing for it
      if (gov === undefined || gov.gate.empty) return proceed()
      return governed(gov, call, ctx)
    }
  }
}

async function governed(gov: GovernanceService, call: AgentCall, ctx: DispatchContext): Promise<InterceptDecision> {
  const resource = `fleet:agent:${call.agent}`
  const request = (message: string, arg?: string): AiRequest =>
    aiRequest({
      message,
      systemPrompt: '',
      model: null,
      userId: ctx.userId ?? null,
      sessionId: null,
      agentId: call.agent,
      conversationId: ctx.coordinationId,
      metadata: {
        'fleet.dispatch.agent': call.agent,
        'fleet.dispatch.skill': call.skill,
        'fleet.coordinator': ctx.coordinator,
        'fleet.coordinationId': ctx.coordinationId,
        ...(arg !== undefined ? { 'fleet.dispatch.arg': arg } : {})
      }
    })
  const message = dispatchMessage(call)
  const whole = await gov.gate.admitOnce(resource, request(message))
  if (!whole.admitted) return refusal(whole)
  if (whole.request.message === message) return proceed()
  const args = { ...call.args }
  let changed = false
  for (const [key, value] of Object.entries(call.args)) {
    if (typeof value !== 'string') continue
    const one = await gov.gate.admitOnce(resource, request(value, key))
    if (!one.admitted) return refusal(one)
    if (one.request.message !== value) {
      args[key] = one.request.message
      changed = true
    }
  }
  return changed ? rewrite({ ...call, args }) : proceed()
}
