import type { CoreState } from './core-state.js'
import { gateOf, TOOL_CALL_GATE, PlatformError } from '../contracts/index.js'
import { ErrorCode, MCP_ERRORS } from './errors.js'
import { checkParamHeaders } from './headers.js'
import { checkGate, clientCapabilities, retryInput } from './calls.js'
import { findResource } from './entries.js'
import { runnerFor, runSettled, type Invocation } from './runners.js'
import { describeErrors } from './schema.js'
import { hasTasksExtension, missingTasksExtension } from './describe.js'
import { legacyTaskCall, taskCall } from './task-calls.js'
import { isObject, MODERN_VERSION, type CallContext, type JsonObject } from './types.js'

/** Most values completion/complete answers with. */
const MAX_COMPLETIONS = 100

// The methods that run a handler (tools/call, resources/read, prompts/get, completion/complete),
// shared by both dialects; `modern` is the 2026-07-28 dialect.

export async function callTool(core: CoreState, p: JsonObject, ctx: CallContext, version: string): Promise<JsonObject> {
  const name = p.name
  if (typeof name !== 'string' || name === '')
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Missing tool name' })
  const tool = core.registry.view(ctx.endpoint.agent).toolsByName.get(name)
  if (tool === undefined) throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `Unknown tool: ${name}` })
  if (p.arguments !== undefined && !isObject(p.arguments))
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'arguments must be an object' })
  let args: JsonObject = p.arguments ?? {}
  if ('_mcp' in args) {
    args = { ...args }
    delete args._mcp
  }
  const modern = version === MODERN_VERSION
  if (modern && ctx.headers !== undefined) checkParamHeaders(ctx.headers, tool, args)
  const retry = retryInput(p, core.codec, 'tools/call', name, ctx.principal ?? null)
  if (!tool.validate(args)) {
    const msg = describeErrors(tool.validate)
    // SEP-1303 (2025-11-25+): input validation errors are tool execution errors
    if (version === '2025-11-25' || modern) return { content: [{ type: 'text', text: msg }], isError: true }
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: msg })
  }
  const caps = clientCapabilities(ctx)
  const withExt = modern && hasTasksExtension(caps)
  if (modern && tool.taskSupport === 'required' && !withExt) throw missingTasksExtension()
  const gated = checkGate(gateOf(core.platform.extensions(TOOL_CALL_GATE)), name, args, ctx)
  if (gated !== undefined) await gated
  const runner = runnerFor(core, { type: 'tool', name, argCount: Object.keys(args).length, ctx, tool, args }, p, caps)
  if (withExt && tool.taskSupport !== 'forbidden') return await taskCall(core, runner, retry, ctx, name)
  if (!modern && isObject(p.task)) {
    if (version !== '2025-11-25' || tool.taskSupport === 'forbidden')
      throw new PlatformError(MCP_ERRORS.MCP_METHOD_NOT_FOUND, {
        detail: `Tool '${name}' does not support task execution`
      })
    return await legacyTaskCall(core, runner, p.task, ctx)
  }
  const result = await runSettled(core, runner, retry, ctx, 'tools/call', name, modern)
  // before 2026-07-28 structuredContent must be an object: other JSON values travel as {result}
  if (!modern && result.structuredContent !== undefined && !isObject(result.structuredContent))
    result.structuredContent = { result: result.structuredContent }
  return result
}

export async function readResource(
  core: CoreState,
  p: JsonObject,
  ctx: CallContext,
  modern: boolean
): Promise<JsonObject> {
  const uri = p.uri
  if (typeof uri !== 'string' || uri === '')
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Missing resource URI' })
  const resource = findResource(core.registry.view(ctx.endpoint.agent), uri)
  // SEP-2164: -32602 from 2026-07-28 on; -32002 before
  if (resource === undefined)
    throw new PlatformError(
      MCP_ERRORS.MCP_RESOURCE_NOT_FOUND,
      { uri },
      { data: { uri }, ...(modern ? { rpcCode: ErrorCode.InvalidParams } : {}) }
    )
  return await runHandler(
    core,
    p,
    { type: 'resource', name: uri, argCount: 1, ctx, resource },
    'resources/read',
    modern
  )
}

export async function getPrompt(
  core: CoreState,
  p: JsonObject,
  ctx: CallContext,
  modern: boolean
): Promise<JsonObject> {
  const name = p.name
  if (typeof name !== 'string' || name === '')
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Missing prompt name' })
  const prompt = core.registry.view(ctx.endpoint.agent).promptsByName.get(name)
  if (prompt === undefined)
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `Unknown prompt: ${name}` })
  if (p.arguments !== undefined && !isObject(p.arguments))
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'arguments must be an object' })
  const args: Record<string, string> = {}
  for (const [k, v] of Object.entries(p.arguments ?? {})) {
    if (k === '_mcp') continue
    if (typeof v !== 'string')
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `Prompt argument '${k}' must be a string` })
    args[k] = v
  }
  for (const a of prompt.arguments)
    if (a.required === true && args[a.name] === undefined)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `Missing required argument: ${a.name}` })
  const inv: Invocation = { type: 'prompt', name, argCount: Object.keys(args).length, ctx, prompt, args }
  return await runHandler(core, p, inv, 'prompts/get', modern)
}

/** resources/read and prompts/get: decode a retry's input, build the runner, run it and settle. */
async function runHandler(
  core: CoreState,
  p: JsonObject,
  inv: Invocation,
  method: string,
  modern: boolean
): Promise<JsonObject> {
  const ctx = inv.ctx
  const retry = retryInput(p, core.codec, method, inv.name, ctx.principal ?? null)
  const runner = runnerFor(core, inv, p, clientCapabilities(ctx))
  return await runSettled(core, runner, retry, ctx, method, inv.name, modern)
}

export async function complete(core: CoreState, p: JsonObject, ctx: CallContext): Promise<JsonObject> {
  const ref = p.ref
  const arg = p.argument
  if (!isObject(ref) || !isObject(arg) || typeof arg.name !== 'string')
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, {
      detail: 'completion/complete needs ref and argument {name, value}'
    })
  let values: string[] = []
  if (ref.type === 'ref/prompt') {
    const prompt = core.registry.view(ctx.endpoint.agent).promptsByName.get(ref.name as string)
    if (prompt === undefined)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `Unknown prompt: ${String(ref.name)}` })
    if (prompt.complete !== undefined)
      values = await prompt.complete(arg.name, typeof arg.value === 'string' ? arg.value : '')
  } else if (ref.type !== 'ref/resource') {
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, {
      detail: `Unknown completion reference type: ${String(ref.type)}`
    })
  }
  values = values.slice(0, MAX_COMPLETIONS)
  return { completion: { values, total: values.length, hasMore: false } }
}
