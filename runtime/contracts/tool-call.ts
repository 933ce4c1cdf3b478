/** A tool call the MCP server is about to run; governance decides. */
export interface ToolCallRequest {
  toolName: string
  args: unknown
  /** The agent whose endpoint received the call, if any. */
  agentId?: string
  principal?: string | null
  sessionId?: string
}
export type ToolCallVerdict = { admitted: true } | { admitted: false; policy: string; reason: string }
/** The hook every MCP `tools/call` passes (long-running ones included); admits until governance installs one. */
export type ToolCallGate = (req: ToolCallRequest) => ToolCallVerdict | Promise<ToolCallVerdict>
export const ADMIT_ALL_TOOL_CALLS: ToolCallGate = () => ({ admitted: true })
