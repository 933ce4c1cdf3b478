import type { Platform } from '../platform.js'
import { gateOf, TOOL_CALL_GATE, type AiRequest } from '../contracts/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import type { OfferedTools } from './agent-tools.js'
import type { AiCancelSignal, AiMessage, AiResponseFormat, AiToolCall, AiToolSpec } from './runtime.js'
import type { TextBuffer } from './text-buffer.js'

/** What the agent loop (the default one or an agent's own run) works from once the turn is admitted. */
export interface LoopInput {
  /** The final system prompt: the scope preamble and governance guidance included. */
  systemPrompt: string
  /** The same framing around another prompt (an agent run's own `systemPrompt`). */
  framePrompt: (own: string) => string
  request: AiRequest
  agent: RegisteredAgent | undefined
  history: AiMessage[]
  /** Tools the client runs (see TurnRequest.clientTools). */
  clientTools: AiToolSpec[]
  /** Tool calls and results after the user message, still to be answered (see TurnRequest.continuation). */
  continuation: AiMessage[]
  /** See TurnRequest.images, TurnRequest.maxOutputTokens and TurnRequest.responseFormat. */
  images: string[]
  maxOutputTokens: number | undefined
  responseFormat: AiResponseFormat | undefined
  /** Set by the loop when a model answer stopped at `maxOutputTokens`. */
  truncated: boolean
  /** The turn's answer so far: every text delta of every round, pushed as the reader takes it. */
  text: TextBuffer
}

/**
 * The tool-call gate on a call to one of the client's tools: the platform does not run it, but
 * policies still decide whether the model may hand it to the client. The denial's text when refused.
 */
export async function gateClientTool(
  platform: Platform,
  input: LoopInput,
  call: AiToolCall
): Promise<string | undefined> {
  const r = input.request
  const verdict = await gateOf(platform.extensions(TOOL_CALL_GATE))({
    toolName: call.name,
    args: call.arguments,
    ...(r.agentId !== null ? { agentId: r.agentId } : {}),
    principal: r.userId,
    ...(r.sessionId !== null ? { sessionId: r.sessionId } : {}),
    client: true
  })
  return verdict.admitted ? undefined : `tool call denied by policy ${verdict.policy}: ${verdict.reason}`
}

/** One tool call of a turn: the tool-call gate, argument validation, then the tool's own sandbox. */
export async function runTool(
  platform: Platform,
  offered: OfferedTools | undefined,
  input: LoopInput,
  call: AiToolCall,
  signal?: AiCancelSignal
): Promise<{ ok: boolean; text: string }> {
  const tool = offered?.byName.get(call.name)
  if (tool === undefined) return { ok: false, text: `unknown tool '${call.name}'` }
  const r = input.request
  try {
    const verdict = await gateOf(platform.extensions(TOOL_CALL_GATE))({
      toolName: call.name,
      args: call.arguments,
      ...(r.agentId !== null ? { agentId: r.agentId } : {}),
      principal: r.userId,
      ...(r.sessionId !== null ? { sessionId: r.sessionId } : {})
    })
    if (!verdict.admitted) return { ok: false, text: `tool call denied by policy ${verdict.policy}: ${verdict.reason}` }
    if (!tool.validate(call.arguments)) return { ok: false, text: `invalid arguments for tool '${call.name}'` }
    const ac = new AbortController()
    const onAbort = (): void => ac.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const result = await tool.invoke(call.arguments as Record<string, never>, {
        signal: ac.signal,
        progress: () => {},
        clientCapabilities: {},
        principal: r.userId,
        ...(r.sessionId !== null ? { sessionId: r.sessionId } : {})
      })
      if (tool.server !== undefined) return mcpResultText(result)
      return { ok: true, text: typeof result === 'string' ? result : (JSON.stringify(result) ?? '') }
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  } catch (err) {
    return { ok: false, text: `tool '${call.name}' failed: ${err instanceof Error ? err.message : String(err)}` }
  }
}

/**
 * Another MCP server's CallToolResult as the model reads it: its text blocks (other blocks as
 * JSON), and `isError` as a failed call.
 */
function mcpResultText(result: unknown): { ok: boolean; text: string } {
  const r = result as { content?: unknown; isError?: unknown; structuredContent?: unknown } | null
  if (r === null || typeof r !== 'object' || !Array.isArray(r.content))
    return { ok: true, text: JSON.stringify(result) ?? '' }
  const parts = r.content.map((c: unknown) => {
    const block = c as { type?: unknown; text?: unknown }
    return block?.type === 'text' && typeof block.text === 'string' ? block.text : JSON.stringify(c)
  })
  const text = parts.length > 0 ? parts.join('\n') : JSON.stringify(r.structuredContent ?? '')
  return { ok: r.isError !== true, text }
}
