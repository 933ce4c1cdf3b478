import { CORE, ExtensionPoint } from './area-key.js'

/** A tool call the MCP server is about to run; governance decides. */
export interface ToolCallRequest {
  toolName: string
  args: unknown
  /** The agent whose endpoint received the call, if any. */
  agentId?: string
  principal?: string | null
  sessionId?: string
  /** A tool the client declared and runs itself: admitted, its call goes back to the client. */
  client?: true
}
export type ToolCallVerdict = { admitted: true } | { admitted: false; policy: string; reason: string }
/** The hook every MCP `tools/call` passes (long-running ones included); admits until governance installs one. */
export type ToolCallGate = (req: ToolCallRequest) => ToolCallVerdict | Promise<ToolCallVerdict>
export const ADMIT_ALL_TOOL_CALLS: ToolCallGate = () => ({ admitted: true })
/**
 * Where governance installs its gate: the core declares it because the MCP server, the AI area's
 * tool runs and the admin view all read it; none of them knows governance. One gate at most.
 */
export const TOOL_CALL_GATE = new ExtensionPoint<ToolCallGate>(CORE, 'tool-call-gate', true)

/** The gate to ask, given the values at TOOL_CALL_GATE: governance's, or one admitting every call. */
export function gateOf(gates: readonly ToolCallGate[]): ToolCallGate {
  return gates[0] ?? ADMIT_ALL_TOOL_CALLS
}
