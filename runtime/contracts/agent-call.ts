/**
 * One call of a fleet agent and how it went: what the fleet's dispatcher hands a transport (local
 * turn or a remote agent over A2A) and gets back.
 */

export interface AgentCall {
  agent: string
  /** `run` when the caller does not say. */
  skill: string
  args: Record<string, unknown>
}

/** How a call went; on failure `text` carries the error. Durations are milliseconds. */
export interface AgentResult {
  agentName: string
  skillId: string
  text: string
  metadata: Record<string, unknown>
  durationMs: number
  success: boolean
}

/** The message a called agent gets, local or remote: `args.message` when a string, else `<skill> <args as JSON>`. */
export function callMessage(call: AgentCall): string {
  return typeof call.args.message === 'string' ? call.args.message : `${call.skill} ${JSON.stringify(call.args)}`
}

/** A call that failed with `text` as its reason (a refusal before the agent ran took no time). */
export const failedResult = (call: AgentCall, text: string, durationMs = 0): AgentResult => ({
  agentName: call.agent,
  skillId: call.skill,
  text,
  metadata: {},
  durationMs,
  success: false
})
