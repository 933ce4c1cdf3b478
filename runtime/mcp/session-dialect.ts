import type { CoreState } from './core-state.js'
import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import { findResource } from './entries.js'
import { callerOf, refusalError } from './session-quota.js'
import type { Session } from './sessions.js'
import { describeResource, describeTemplate, describePrompt, legacyTask } from './describe.js'
import { callTool, complete, getPrompt, readResource } from './invocations.js'
import { taskOf } from './task-calls.js'
import {
  isObject,
  SESSION_VERSIONS,
  LATEST_SESSION_VERSION,
  LOG_LEVELS,
  type CallContext,
  type JsonObject,
  type LogLevel
} from './types.js'

/** tasks/list page size. */
const TASK_PAGE = 100

/**
 * The session dialect (2024-11-05 … 2025-11-25): initialize opens a session, every later request
 * names it in Mcp-Session-Id (or rides the WebSocket it was opened on).
 */
export async function sessionDispatch(
  core: CoreState,
  method: string,
  params: JsonObject | undefined,
  id: unknown,
  ctx: CallContext
): Promise<JsonObject | undefined> {
  if (method === 'initialize') return await initialize(core, params, ctx)
  const s = ctx.session ?? core.sessionFromHeader(ctx)
  // a WebSocket's session: its principal is judged again during the connection (a JWT can expire)
  if (ctx.transport === 'ws') {
    if (!core.sessions.ownedBy(s, callerOf(ctx))) throw new PlatformError(MCP_ERRORS.MCP_SESSION_NOT_FOUND)
    core.sessions.touch(s)
  }
  const hv = ctx.headers?.['mcp-protocol-version']?.trim()
  if (hv !== undefined) {
    if (!(SESSION_VERSIONS as readonly string[]).includes(hv))
      throw new PlatformError(MCP_ERRORS.MCP_SESSION_REQUIRED, {
        detail: `Bad Request: Unsupported protocol version: ${hv} (supported versions: ${SESSION_VERSIONS.join(', ')})`
      })
    if (hv !== s.record.version)
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, {
        detail: `MCP-Protocol-Version mismatch: session=${s.record.version}, header=${hv}`
      })
  }
  if (id === undefined) {
    notification(core, method, params, s)
    return undefined
  }
  if (ctx.cancel === undefined) return await sessionMethod(core, method, params ?? {}, ctx, s)
  s.inflight.set(id as string | number, ctx.cancel)
  try {
    return await sessionMethod(core, method, params ?? {}, ctx, s)
  } finally {
    s.inflight.delete(id as string | number)
  }
}

function notification(core: CoreState, method: string, params: JsonObject | undefined, s: Session): void {
  if (method === 'notifications/initialized') {
    if (!s.record.initialized) {
      s.record.initialized = true
      core.sessions.save(s)
    }
    return
  }
  if (method === 'notifications/cancelled') {
    const rid = params?.requestId
    if (typeof rid === 'string' || typeof rid === 'number') s.inflight.get(rid)?.()
  }
}

/** Refuses a client value whose JSON is larger than the session may keep. */
function withinBytes(what: string, value: JsonObject, limit: number, key: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(value))
  if (bytes > limit)
    throw new PlatformError(
      MCP_ERRORS.MCP_INVALID_PARAMS,
      { detail: `${what} too large: ${bytes} bytes as JSON, the limit is ${limit} bytes (${key})` },
      { data: { limitBytes: limit, key } }
    )
}

/** Only a resource this endpoint serves (or one its templates match), by a URI of bounded length, up to a count. */
function subscribe(core: CoreState, p: JsonObject, ctx: CallContext, s: Session): void {
  const uri = p.uri
  if (typeof uri !== 'string' || uri === '')
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Missing resource URI' })
  const limits = core.sessions.storage
  if (Buffer.byteLength(uri) > limits.uriBytes)
    throw new PlatformError(
      MCP_ERRORS.MCP_INVALID_PARAMS,
      { detail: `Resource URI too long: the limit is ${limits.uriBytes} bytes (platform.mcp.sessions.max-uri-bytes)` },
      { data: { limitBytes: limits.uriBytes, key: 'platform.mcp.sessions.max-uri-bytes' } }
    )
  if (findResource(core.registry.view(ctx.endpoint.agent), uri) === undefined)
    throw new PlatformError(MCP_ERRORS.MCP_RESOURCE_NOT_FOUND, { uri }, { data: { uri } })
  if (s.subscriptions.has(uri)) return
  if (s.subscriptions.size >= limits.subscriptions)
    throw new PlatformError(
      MCP_ERRORS.MCP_SESSION_LIMIT,
      {
        detail: `Too many subscriptions: a session holds at most ${limits.subscriptions} (platform.mcp.sessions.max-subscriptions); unsubscribe from one first`
      },
      { data: { limit: limits.subscriptions, key: 'platform.mcp.sessions.max-subscriptions' } }
    )
  core.sessions.subscribe(s, uri)
}

async function initialize(core: CoreState, params: JsonObject | undefined, ctx: CallContext): Promise<JsonObject> {
  const requested = params?.protocolVersion
  const version =
    typeof requested === 'string' && (SESSION_VERSIONS as readonly string[]).includes(requested)
      ? requested
      : LATEST_SESSION_VERSION
  const caps = isObject(params?.capabilities) ? params.capabilities : {}
  const info = isObject(params?.clientInfo) ? params.clientInfo : undefined
  const limits = core.sessions.storage
  withinBytes('capabilities', caps, limits.capabilitiesBytes, 'platform.mcp.sessions.max-capabilities-bytes')
  if (info !== undefined)
    withinBytes('clientInfo', info, limits.clientInfoBytes, 'platform.mcp.sessions.max-client-info-bytes')
  const s = await core.sessions.create(ctx.endpoint.path, version, caps, info, callerOf(ctx))
  if ('scope' in s) throw refusalError(s)
  ctx.createdSession = s
  ctx.session = s
  const capabilities: JsonObject = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    logging: {},
    completions: {}
  }
  if (version === '2025-11-25') capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } }
  const out: JsonObject = { protocolVersion: version, capabilities, serverInfo: core.serverInfo(ctx) }
  if (core.opts.instructions !== undefined) out.instructions = core.opts.instructions
  return out
}

async function sessionMethod(
  core: CoreState,
  method: string,
  p: JsonObject,
  ctx: CallContext,
  s: Session
): Promise<JsonObject> {
  const view = core.registry.view(ctx.endpoint.agent)
  switch (method) {
    case 'ping':
      return {}
    case 'tools/list':
      return { tools: core.listedTools(ctx, s.record.version) }
    case 'tools/call':
      return await callTool(core, p, ctx, s.record.version)
    case 'resources/list':
      return { resources: view.resources.map(describeResource) }
    case 'resources/templates/list':
      return { resourceTemplates: view.templates.map(describeTemplate) }
    case 'resources/read':
      return await readResource(core, p, ctx, false)
    case 'resources/subscribe':
      subscribe(core, p, ctx, s)
      return {}
    case 'resources/unsubscribe':
      if (typeof p.uri !== 'string')
        throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Missing resource URI' })
      core.sessions.unsubscribe(s, p.uri)
      return {}
    case 'prompts/list':
      return { prompts: view.prompts.map(describePrompt) }
    case 'prompts/get':
      return await getPrompt(core, p, ctx, false)
    case 'completion/complete':
      return await complete(core, p, ctx)
    case 'logging/setLevel': {
      if (typeof p.level !== 'string' || !LOG_LEVELS.includes(p.level as LogLevel))
        throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: `Invalid log level: ${String(p.level)}` })
      s.record.logLevel = p.level as LogLevel
      core.sessions.save(s)
      return {}
    }
    case 'tasks/get':
      return legacyTask(await taskOf(core, p, ctx, true))
    case 'tasks/cancel': {
      const t = await taskOf(core, p, ctx, true)
      if (core.tasks.isTerminal(t))
        throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, {
          detail: `Cannot cancel task: already in terminal status '${t.status}'`
        })
      await core.tasks.cancel(t)
      return legacyTask(t)
    }
    case 'tasks/result': {
      const t = await taskOf(core, p, ctx, true)
      await core.tasks.settled(t)
      if (t.status === 'failed' && t.error !== undefined)
        throw new PlatformError(
          MCP_ERRORS.MCP_HANDLER_ERROR,
          { detail: t.error.message },
          { rpcCode: t.error.code, data: t.error.data }
        )
      if (t.status === 'cancelled')
        throw new PlatformError(MCP_ERRORS.MCP_INVALID_REQUEST, { detail: `Task '${t.id}' was cancelled` })
      return { ...t.result, _meta: { 'io.modelcontextprotocol/related-task': { taskId: t.id } } }
    }
    case 'tasks/list': {
      const all = await core.tasks.list(ctx.principal ?? null)
      const start = typeof p.cursor === 'string' ? Math.max(0, Number.parseInt(p.cursor, 10) || 0) : 0
      const page = all.slice(start, start + TASK_PAGE)
      const out: JsonObject = { tasks: page.map(legacyTask) }
      if (start + TASK_PAGE < all.length) out.nextCursor = String(start + TASK_PAGE)
      return out
    }
    default:
      throw new PlatformError(MCP_ERRORS.MCP_METHOD_NOT_FOUND, { detail: `Method not found: ${method}` })
  }
}
