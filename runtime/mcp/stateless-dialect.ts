import type { CoreState } from './core-state.js'
import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import { checkRoutingHeaders } from './headers.js'
import {
  hasTasksExtension,
  missingTasksExtension,
  describeResource,
  describeTemplate,
  describePrompt,
  taskDetail
} from './describe.js'
import { callTool, complete, getPrompt, readResource } from './invocations.js'
import { taskOf } from './task-calls.js'
import {
  isObject,
  MODERN_VERSION,
  SESSION_VERSIONS,
  META_VERSION,
  META_CAPS,
  META_CLIENT,
  META_LOG_LEVEL,
  META_SERVER,
  TASKS_EXT,
  APPS_EXT,
  APP_MIME,
  LOG_LEVELS,
  type CallContext,
  type JsonObject,
  type LogLevel
} from './types.js'

const STATELESS_METHODS = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'subscriptions/listen',
  'tasks/get',
  'tasks/update',
  'tasks/cancel'
])
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list'
])
const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel'])
const SUPPORTED_ALL = [MODERN_VERSION, ...SESSION_VERSIONS]

/** The stateless dialect (2026-07-28): every request carries its `_meta` envelope; no session. */
export async function statelessDispatch(
  core: CoreState,
  method: string,
  params: JsonObject | undefined,
  id: unknown,
  ctx: CallContext
): Promise<JsonObject | undefined> {
  if (id === undefined) return undefined
  if (!STATELESS_METHODS.has(method))
    throw new PlatformError(MCP_ERRORS.MCP_METHOD_NOT_STATELESS, { method, version: MODERN_VERSION })
  const meta = params?._meta
  if (!isObject(meta))
    throw new PlatformError(MCP_ERRORS.MCP_BAD_META, { detail: 'Invalid _meta envelope: params._meta is required' })
  const version = meta[META_VERSION]
  if (typeof version !== 'string')
    throw new PlatformError(MCP_ERRORS.MCP_BAD_META, { detail: `Invalid _meta envelope: ${META_VERSION} missing` })
  if (!isObject(meta[META_CAPS]))
    throw new PlatformError(MCP_ERRORS.MCP_BAD_META, { detail: `Invalid _meta envelope: ${META_CAPS} missing` })
  if (meta[META_CLIENT] !== undefined && !isObject(meta[META_CLIENT]))
    throw new PlatformError(MCP_ERRORS.MCP_BAD_META, {
      detail: `Invalid _meta envelope: ${META_CLIENT} must be an object`
    })
  const level = meta[META_LOG_LEVEL]
  if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel))
    throw new PlatformError(MCP_ERRORS.MCP_BAD_META, {
      detail: `Invalid _meta envelope: ${META_LOG_LEVEL} must be a logging level`
    })
  if (ctx.headers !== undefined) {
    const hv = ctx.headers['mcp-protocol-version']?.trim()
    if (hv !== version)
      throw new PlatformError(MCP_ERRORS.MCP_HEADER_MISMATCH, {
        detail: `MCP-Protocol-Version header '${hv ?? ''}' does not match _meta protocol version '${version}'`
      })
  }
  if (version !== MODERN_VERSION)
    throw new PlatformError(
      MCP_ERRORS.MCP_UNSUPPORTED_VERSION,
      { version },
      { data: { supported: [MODERN_VERSION], requested: version } }
    )
  if (ctx.headers !== undefined) checkRoutingHeaders(ctx.headers, method, params)
  ctx.meta = meta
  const caps = meta[META_CAPS] as JsonObject
  if (TASK_METHODS.has(method) && !hasTasksExtension(caps)) throw missingTasksExtension()
  const p = params as JsonObject
  let result: JsonObject
  switch (method) {
    case 'server/discover':
      result = discover(core, ctx)
      break
    case 'tools/list':
      result = { tools: core.listedTools(ctx, MODERN_VERSION) }
      break
    case 'tools/call':
      result = await callTool(core, p, ctx, MODERN_VERSION)
      break
    case 'resources/list':
      result = { resources: core.registry.view(ctx.endpoint.agent).resources.map(describeResource) }
      break
    case 'resources/templates/list':
      result = { resourceTemplates: core.registry.view(ctx.endpoint.agent).templates.map(describeTemplate) }
      break
    case 'resources/read':
      result = await readResource(core, p, ctx, true)
      break
    case 'prompts/list':
      result = { prompts: core.registry.view(ctx.endpoint.agent).prompts.map(describePrompt) }
      break
    case 'prompts/get':
      result = await getPrompt(core, p, ctx, true)
      break
    case 'completion/complete':
      result = await complete(core, p, ctx)
      break
    case 'subscriptions/listen':
      result = await core.subscriptions.listen(id as string | number, p, ctx, core.sessions.storage)
      break
    case 'tasks/get':
      result = taskDetail(await taskOf(core, p, ctx, false))
      break
    case 'tasks/update': {
      const t = await taskOf(core, p, ctx, false)
      if (!isObject(p.inputResponses))
        throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'inputResponses must be an object' })
      core.tasks.update(t, p.inputResponses)
      result = {}
      break
    }
    default: {
      await core.tasks.cancel(await taskOf(core, p, ctx, false))
      result = {}
    }
  }
  return decorate(core, method, result, ctx)
}

/** resultType first, caching hints on complete cacheable results, serverInfo in `_meta`. */
function decorate(core: CoreState, method: string, result: JsonObject, ctx: CallContext): JsonObject {
  const resultType = typeof result.resultType === 'string' ? result.resultType : 'complete'
  const out: JsonObject = { resultType }
  if (resultType === 'complete' && CACHEABLE.has(method)) {
    out.ttlMs = core.opts.cacheTtlMs
    out.cacheScope = core.opts.cacheScope
  }
  // copied key by key: a rest destructuring builds one more object per request
  for (const k in result) if (k !== 'resultType' && k !== '_meta' && Object.hasOwn(result, k)) out[k] = result[k]
  const meta = result._meta
  out._meta = isObject(meta)
    ? { ...meta, [META_SERVER]: core.serverInfo(ctx) }
    : { [META_SERVER]: core.serverInfo(ctx) }
  return out
}

function discover(core: CoreState, ctx: CallContext): JsonObject {
  const view = core.registry.view(ctx.endpoint.agent)
  const extensions: JsonObject = { [TASKS_EXT]: {} }
  if (view.tools.some((t) => t.uiResource !== undefined)) extensions[APPS_EXT] = { mimeTypes: [APP_MIME] }
  const out: JsonObject = {
    supportedVersions: SUPPORTED_ALL,
    capabilities: {
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
      extensions
    }
  }
  if (core.opts.instructions !== undefined) out.instructions = core.opts.instructions
  return out
}
