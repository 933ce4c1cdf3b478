/**
 * A call of an agent this platform hosts: one governed turn through the AI service (the agent's
 * policies, scope, runtime and tools, or its own run()), its text collected, its message the
 * call's `callMessage`.
 */
import { performance } from 'node:perf_hooks'
import type { AiService, TurnRequest } from '../ai/index.js'
import { callMessage } from '../contracts/index.js'
import type { AgentCall, AgentResult, AgentTransport, DispatchContext } from './fleet-types.js'

/**
 * Where the turn's text deltas go: nowhere, since the call answers the complete text. Passed as
 * the turn's sink, the deltas never travel as events through the turn's layers to this reader
 * (a promise and a resumption each, per streamed token).
 */
const IGNORE_DELTAS = (): void => {}

export class LocalTransport implements AgentTransport {
  readonly kind = 'local' as const

  constructor(private readonly ai: AiService) {}

  async call(call: AgentCall, ctx: DispatchContext): Promise<AgentResult> {
    const t0 = performance.now()
    let text = ''
    let failure: string | undefined
    let usage: unknown
    // optional keys assigned, not spread in: a spread between keys goes to V8's slow path
    const request: TurnRequest = {
      agent: call.agent,
      message: callMessage(call),
      conversationId: ctx.coordinationId,
      facts: {
        'fleet.coordinationId': ctx.coordinationId,
        'fleet.coordinator': ctx.coordinator,
        'fleet.dispatch.skill': call.skill
      }
    }
    if (ctx.userId !== undefined) request.userId = ctx.userId
    const turn = this.ai.runTurn(request, ctx.signal, IGNORE_DELTAS)
    for await (const e of turn) {
      if (e.type === 'complete') text = e.text
      else if (e.type === 'error') failure = e.message
      else if (e.type === 'usage') usage = e.usage
    }
    const metadata: Record<string, unknown> = { transport: 'local' }
    if (usage !== undefined) metadata.usage = usage
    return {
      agentName: call.agent,
      skillId: call.skill,
      text: failure ?? text,
      metadata,
      durationMs: Math.round(performance.now() - t0),
      success: failure === undefined
    }
  }
}
