import { pluginCallFailure, type CancelSignal } from '../plugins/index.js'
import type { ToolCallGate, ToolCallVerdict } from '../contracts/index.js'
import { toCallToolResult, toolErrorResult, isInputRequired } from './content.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { RESERVED_CODES, MCP_ERRORS } from './errors.js'
import type { RequestStateCodec } from './request-state.js'
import type { InvokeContext } from './entries.js'
import type { Outcome } from './tasks.js'
import { LOG_LEVELS, isObject, type CallContext, type JsonObject, type LogLevel } from './types.js'

/** Which client capability each input request needs (SEP-2322: only requests the client declared). */
const CAPABILITY_OF: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots'
}

/**
 * Wraps one invocation (tools/call, resources/read, prompts/get) for MCP
 * tracing: `mcp.tool.name`, `mcp.tool.type`, `mcp.tool.arg_count`, `mcp.tool.error`.
 */
export type InvocationWrapper = <T>(
  info: { name: string; type: 'tool' | 'resource' | 'prompt'; argCount: number; ctx: CallContext },
  run: () => Promise<T>
) => Promise<T>
export const NO_WRAP: InvocationWrapper = (_info, run) => run()

/** What a handler's input-required retry carries, after the state's integrity was verified. */
export interface RetryInput {
  gathered?: Record<string, unknown>
  toolState?: unknown
}

/** Validates `inputResponses` (an object of objects) and verifies `requestState`; tampering is an error. */
export function retryInput(
  params: JsonObject,
  codec: RequestStateCodec,
  method: string,
  target: string,
  principal: string | null
): RetryInput {
  const out: RetryInput = {}
  if (params.requestState !== undefined) {
    const p = codec.verify(params.requestState, method, target, principal)
    if (p.r !== undefined) out.gathered = { ...p.r }
    out.toolState = p.s
  }
  if (params.inputResponses !== undefined) {
    const ir = params.inputResponses
    if (!isObject(ir))
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'inputResponses must be an object' })
    for (const [k, v] of Object.entries(ir))
      if (!isObject(v))
        throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `inputResponses['${k}'] must be an object` })
    out.gathered = { ...out.gathered, ...ir }
  }
  return out
}

export function clientCapabilities(ctx: CallContext): JsonObject {
  if (ctx.meta !== undefined) {
    const c = ctx.meta['io.modelcontextprotocol/clientCapabilities']
    return isObject(c) ? c : {}
  }
  return ctx.session?.record.clientCapabilities ?? {}
}

/**
 * Keeps the input requests the client can answer; if none is left, the request needs a capability
 * the client did not declare: -32021 with `requiredCapabilities` as a ClientCapabilities object.
 */
export function filterInputRequests(
  requests: Record<string, JsonObject>,
  caps: JsonObject,
  httpStatus = 400
): Record<string, JsonObject> {
  const kept: Record<string, JsonObject> = {}
  const missing: JsonObject = {}
  for (const [k, r] of Object.entries(requests)) {
    const cap = CAPABILITY_OF[r.method as string]
    if (cap === undefined || caps[cap] !== undefined) kept[k] = r
    else missing[cap] = {}
  }
  if (Object.keys(kept).length === 0 && Object.keys(missing).length > 0) {
    throw new PlatformError(
      MCP_ERRORS.MCP_MISSING_CAPABILITY,
      { detail: `This request requires client capabilities: ${Object.keys(missing).join(', ')}` },
      { data: { requiredCapabilities: missing }, status: httpStatus }
    )
  }
  return kept
}

/** Builds the InvokeContext of one run: progress and log partials become notifications on the request's sink. */
export function invokeContext(
  ctx: CallContext,
  signal: CancelSignal,
  params: JsonObject,
  gathered: RetryInput['gathered'],
  toolState: unknown,
  caps: JsonObject
): InvokeContext {
  const meta = isObject(params._meta) ? params._meta : undefined
  const token = meta?.progressToken
  const logLevel =
    ctx.meta !== undefined
      ? (ctx.meta['io.modelcontextprotocol/logLevel'] as LogLevel | undefined)
      : ctx.session?.record.logLevel
  const threshold = logLevel === undefined ? (ctx.meta !== undefined ? Infinity : 0) : LOG_LEVELS.indexOf(logLevel)
  let step = 0
  const ictx: InvokeContext = {
    signal,
    clientCapabilities: caps,
    principal: ctx.principal ?? null,
    caller: ctx.caller ?? null,
    progress: (partial) => {
      if (isObject(partial) && typeof partial.log === 'string') {
        const level = (LOG_LEVELS.includes(partial.log as LogLevel) ? partial.log : 'info') as LogLevel
        if (LOG_LEVELS.indexOf(level) < threshold) return
        const p: JsonObject = { level, data: partial.data ?? partial.message ?? '' }
        if (typeof partial.logger === 'string') p.logger = partial.logger
        ctx.sink.notify({ jsonrpc: '2.0', method: 'notifications/message', params: p })
        return
      }
      if (token === undefined || (typeof token !== 'string' && typeof token !== 'number')) return
      step++
      const p: JsonObject = { progressToken: token }
      if (isObject(partial) && typeof partial.progress === 'number') {
        p.progress = partial.progress
        if (typeof partial.total === 'number') p.total = partial.total
        if (typeof partial.message === 'string') p.message = partial.message
      } else {
        p.progress = step
        p.message = typeof partial === 'string' ? partial : (JSON.stringify(partial) ?? '')
      }
      ctx.sink.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: p })
    }
  }
  if (ctx.session !== undefined) ictx.sessionId = ctx.session.id
  if (typeof token === 'string' || typeof token === 'number') ictx.wantsProgress = true
  if (gathered !== undefined) ictx.inputResponses = gathered
  if (toolState !== undefined) ictx.requestState = toolState
  return ictx
}

/** The `_meta` key of a tool error result that says which plugin failed and how. */
export const FAILURE_META = 'io.agent-platform/failure'

const CAUSES: Record<string, string> = {
  timeout: 'timed out',
  memory: 'out of memory',
  crashed: 'crashed',
  unavailable: 'plugin unavailable',
  'invalid-result': 'invalid result'
}

/**
 * A thrown error → tool error result, or a protocol error for explicit JSON-RPC codes. A plugin
 * that times out, runs out of memory, crashes or is down gives one shape on every tier: an
 * `isError` result whose text names the cause and the plugin, and `_meta` saying the same for code.
 */
export function failureOutcome(err: unknown): Outcome {
  // a client tool's own JSON-RPC error code travels on as that code
  const code = isPlatformError(err, MCP_ERRORS.MCP_CLIENT_TOOL_FAILED)
    ? err.params.code
    : isPlatformError(err)
      ? err.rpcCode
      : (err as { code?: unknown })?.code
  if (typeof code === 'number' && Number.isInteger(code) && code >= RESERVED_CODES.min && code <= RESERVED_CODES.max) {
    return { kind: 'error', error: { code, message: (err as Error).message ?? 'Internal error' } }
  }
  const failed = pluginCallFailure(err)
  if (failed !== undefined && CAUSES[failed.reason] !== undefined) {
    const message = (err as Error).message
    const named = message.includes(`plugin '${failed.plugin}'`) ? message : `plugin '${failed.plugin}': ${message}`
    const result = toolErrorResult(`Tool invocation failed (${CAUSES[failed.reason]}): ${named}`)
    result._meta = { [FAILURE_META]: { plugin: failed.plugin, reason: failed.reason } }
    return { kind: 'complete', result }
  }
  const msg = err instanceof Error ? err.message : String(err)
  return { kind: 'complete', result: toolErrorResult(msg) }
}

export function valueOutcome(value: unknown): Outcome {
  if (isInputRequired(value)) {
    const reqs = isObject(value.inputRequests) ? (value.inputRequests as Record<string, JsonObject>) : {}
    return { kind: 'input', inputRequests: reqs, toolState: value.requestState }
  }
  return { kind: 'complete', result: toCallToolResult(value) }
}

/**
 * The governance gate: every tools/call passes it; a denial never runs the tool (a -32600
 * error naming the policy). Synchronous when the gate answers synchronously (no policy, or only built-in ones).
 */
export function checkGate(gate: ToolCallGate, toolName: string, args: unknown, ctx: CallContext): void | Promise<void> {
  let verdict
  try {
    verdict = gate({
      toolName,
      args,
      ...(ctx.endpoint.agent !== undefined ? { agentId: ctx.endpoint.agent } : {}),
      principal: ctx.principal ?? null,
      ...(ctx.session !== undefined ? { sessionId: ctx.session.id } : {})
    })
  } catch (err) {
    throw gateFailed(toolName, err)
  }
  if (verdict instanceof Promise)
    return verdict.then(
      (v) => {
        admitted(toolName, v)
      },
      (err: unknown) => {
        throw gateFailed(toolName, err)
      }
    )
  admitted(toolName, verdict)
}

// a broken policy plane fails closed
const gateFailed = (toolName: string, err: unknown): PlatformError =>
  new PlatformError(MCP_ERRORS.MCP_POLICY_DENIED, {
    tool: toolName,
    policy: 'governance',
    reason: (err as Error).message
  })

function admitted(toolName: string, verdict: ToolCallVerdict): void {
  if (!verdict.admitted)
    throw new PlatformError(MCP_ERRORS.MCP_POLICY_DENIED, {
      tool: toolName,
      policy: verdict.policy,
      reason: verdict.reason
    })
}
