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
