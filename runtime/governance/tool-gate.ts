/**
 * The MCP tool-call gate: every `tools/call` becomes a `call_tool:<name>` request through the
 * admission gate, with `tool_name`, `action: call_tool`, `tool_args` and a 200-character
 * `tool_args_preview` in metadata. A deny names the policy and reason; the MCP server turns it
 * into a JSON-RPC error (-32600).
 */
import type { ToolCallGate, ToolCallRequest, ToolCallVerdict } from '../contracts/index.js'
import { aiRequest, type AiRequest } from '../contracts/index.js'
import type { Admission, PolicyAdmissionGate } from './gate.js'

export const TOOL_ARGS_PREVIEW_CHARS = 200

export function toolArgsPreview(args: unknown): string {
  let s: string
  try {
    s = typeof args === 'string' ? args : (JSON.stringify(args) ?? '')
  } catch {
    s = String(args)
  }
  return s.length > TOOL_ARGS_PREVIEW_CHARS ? s.slice(0, TOOL_ARGS_PREVIEW_CHARS) + '…' : s
}

export function toolCallRequest(req: ToolCallRequest): AiRequest {
  return aiRequest({
    message: `call_tool:${req.toolName}`,
    agentId: req.agentId ?? null,
    userId: req.principal ?? null,
    sessionId: req.sessionId ?? null,
    metadata: {
      tool_name: req.toolName,
      action: 'call_tool',
      tool_args: req.args ?? {},
      tool_args_preview: toolArgsPreview(req.args ?? {}),
      ...(req.client === true ? { tool_client: true } : {})
    }
  })
}

const ADMITTED: ToolCallVerdict = { admitted: true }
const verdict = (a: Admission): ToolCallVerdict =>
  a.admitted ? ADMITTED : { admitted: false, policy: a.policy.name, reason: a.reason }

export function createToolCallGate(gate: PolicyAdmissionGate): ToolCallGate {
  return (req) => {
    // with no policy loaded nothing is evaluated or logged: skip building the request
    if (gate.empty) return ADMITTED
    // a tool call has no post-response phase: admitOnce gives per-turn state (concurrency slots) back
    const a = gate.admitOnce(`mcp:tool:${req.toolName}`, toolCallRequest(req))
    return a instanceof Promise ? a.then(verdict) : verdict(a)
  }
}
