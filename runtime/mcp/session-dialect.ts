import type { CoreState } from './core-state.js'
import { McpError, ErrorCode, rejection } from './errors.js'
import { refusalError } from './session-quota.js'
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
  if (method === 'initialize') return initialize(core, params, ctx)
  const s = ctx.session ?? core.sessionFromHeader(ctx)
  const hv = ctx.headers?.['mcp-protocol-version']?.trim()
  if (hv !== undefined) {
    if (!(SESSION_VERSIONS as readonly string[]).includes(hv))
      throw rejection(
        ErrorCode.ServerError,
        `Bad Request: Unsupported protocol version: ${hv} (supported versions: ${SESSION_VERSIONS.join(', ')})`
      )
    if (hv !== s.record.version)
      throw rejection(
        ErrorCode.InvalidRequest,
        `MCP-Protocol-Version mismatch: session=${s.record.version}, header=${hv}`
      )
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

function initialize(core: CoreState, params: JsonObject | undefined, ctx: CallContext): JsonObject {
  const requested = params?.protocolVersion
  const version =
    typeof requested === 'string' && (SESSION_VERSIONS as readonly string[]).includes(requested)
      ? requested
      : LATEST_SESSION_VERSION
  const caps = isObject(params?.capabilities) ? params.capabilities : {}
  const info = isObject(params?.clientInfo) ? params.clientInfo : undefined
  const s = core.sessions.create(ctx.endpoint.path, version, caps, info, {
    principal: ctx.principal ?? null,
    ...(ctx.address !== undefined ? { address: ctx.address } : {})
  })
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
    case 'resources/unsubscribe': {
      if (typeof p.uri !== 'string') throw new McpError(ErrorCode.InvalidParams, 'Missing resource URI')
      const subs = new Set(s.record.subscriptions)
      if (method === 'resources/subscribe') subs.add(p.uri)
      else subs.delete(p.uri)
      s.record.subscriptions = [...subs]
      core.sessions.save(s)
      return {}
    }
    case 'prompts/list':
      return { prompts: view.prompts.map(describePrompt) }
    case 'prompts/get':
      return await getPrompt(core, p, ctx, false)
    case 'completion/complete':
      return await complete(core, p, ctx)
    case 'logging/setLevel': {
      if (typeof p.level !== 'string' || !LOG_LEVELS.includes(p.level as LogLevel))
        throw new McpError(ErrorCode.InvalidParams, `Invalid log level: ${String(p.level)}`)
      s.record.logLevel = p.level as LogLevel
      core.sessions.save(s)
      return {}
    }
    case 'tasks/get':
      return legacyTask(taskOf(core, p, ctx, true))
    case 'tasks/cancel': {
      const t = taskOf(core, p, ctx, true)
      if (core.tasks.isTerminal(t))
        throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${t.status}'`)
      core.tasks.cancel(t)
      return legacyTask(t)
    }
    case 'tasks/result': {
      const t = taskOf(core, p, ctx, true)
      await core.tasks.settled(t)
      if (t.status === 'failed' && t.error !== undefined)
        throw new McpError(t.error.code, t.error.message, t.error.data)
      if (t.status === 'cancelled') throw new McpError(ErrorCode.InvalidRequest, `Task '${t.id}' was cancelled`)
      return { ...t.result, _meta: { 'io.modelcontextprotocol/related-task': { taskId: t.id } } }
    }
    case 'tasks/list': {
      const all = core.tasks.list(ctx.principal ?? null)
      const start = typeof p.cursor === 'string' ? Math.max(0, Number.parseInt(p.cursor, 10) || 0) : 0
      const page = all.slice(start, start + TASK_PAGE)
      const out: JsonObject = { tasks: page.map(legacyTask) }
      if (start + TASK_PAGE < all.length) out.nextCursor = String(start + TASK_PAGE)
      return out
    }
    default:
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`)
  }
}
