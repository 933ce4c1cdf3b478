import type { Platform } from '../platform.js'
import type { Context } from '../http/index.js'
import { toContents, toPromptResult } from './content.js'
import { McpError, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_ERROR, SESSION_NOT_FOUND, RESOURCE_NOT_FOUND_LEGACY, UNSUPPORTED_VERSION, HEADER_MISMATCH, INTERNAL_ERROR } from './errors.js'
import { checkRoutingHeaders, checkParamHeaders } from './headers.js'
import { checkGate, clientCapabilities, failureOutcome, filterInputRequests, invokeContext, retryInput, valueOutcome, NO_WRAP, type InvocationWrapper, type RetryInput } from './calls.js'
import { findResource, type McpRegistry, type ToolEntry } from './registry.js'
import type { RequestStateCodec } from './request-state.js'
import { describeErrors } from './schema.js'
import type { SessionStore, Session } from './sessions.js'
import { refusalError } from './session-quota.js'
import type { Outcome, Task, TaskManager, Runner } from './tasks.js'
import { Subscriptions } from './subscriptions.js'
import { hasTasksExtension, missingTasksExtension, describeResource, describeTemplate, describePrompt, taskDetail, legacyTask } from './describe.js'
import {
  isObject,
  MODERN_VERSION, SESSION_VERSIONS, LATEST_SESSION_VERSION, META_VERSION, META_CAPS, META_CLIENT, META_LOG_LEVEL, META_SERVER,
  TASKS_EXT, APPS_EXT, APP_MIME, LOG_LEVELS, type CallContext, type EndpointRef, type JsonObject, type LogLevel, type Sink
} from './types.js'


const STATELESS_METHODS = new Set(['server/discover', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete', 'subscriptions/listen', 'tasks/get', 'tasks/update', 'tasks/cancel'])
const CACHEABLE = new Set(['server/discover', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list'])
const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel'])
const SUPPORTED_ALL = [MODERN_VERSION, ...SESSION_VERSIONS]

export interface CoreOptions {
  serverName: string
  serverVersion: string
  instructions?: string
  cacheTtlMs: number
  cacheScope: 'public' | 'private'
  syncWindowMs: number
}

/** The outcome of one message: a response (or none for notifications and client responses) and the HTTP status. */
export interface Handled { response?: JsonObject, status: number }

/** A hook that runs before any method is dispatched (the place for OAuth); throw McpError to reject. */
export type BeforeDispatch = (msg: { method: string, params: JsonObject | undefined, id: unknown }, ctx: CallContext) => void | Promise<void>

/**
 * Runs before an HTTP request (POST, GET, DELETE) reaches the MCP endpoint; false means the guard
 * has answered it (OAuth 401/403). Unlike BeforeDispatch it also covers GET streams and DELETE.
 */
export type HttpGuard = (ctx: Context, endpoint: EndpointRef) => boolean | Promise<boolean>

/**
 * The transport-independent JSON-RPC core. One message in, one response out; the dialect is chosen
 * per request (MCP 2026-07-28 §versioning): a protocol version in `params._meta` or `server/discover`
 * → stateless; everything else → the session dialect (initialize, Mcp-Session-Id).
 */
export class McpCore {
  readonly beforeDispatch: BeforeDispatch[] = []
  readonly httpGuards: HttpGuard[] = []
  wrap: InvocationWrapper = NO_WRAP
  private readonly subscriptions = new Subscriptions()
  private readonly infos = new Map<string, JsonObject>()
  private readonly lists = new Map<string, JsonObject[]>()

  constructor (
    private readonly platform: Platform,
    readonly registry: McpRegistry,
    readonly sessions: SessionStore,
    readonly tasks: TaskManager,
    private readonly codec: RequestStateCodec,
    private readonly opts: CoreOptions
  ) {
    registry.onChange(() => { this.infos.clear(); this.lists.clear(); this.subscriptions.changed(this.sessions.liveSessions()) })
  }

  // --- envelope ---

  async handle (msg: unknown, ctx: CallContext): Promise<Handled> {
    if (Array.isArray(msg)) throw new McpError(INVALID_REQUEST, 'JSON-RPC batching is not supported (removed in MCP 2025-06-18)', undefined, 400)
    if (!isObject(msg) || msg.jsonrpc !== '2.0') throw new McpError(INVALID_REQUEST, "Invalid JSON-RPC message: expected an object with jsonrpc '2.0'", undefined, 400)
    const id = msg.id
    if (id !== undefined && typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) throw new McpError(INVALID_REQUEST, 'Invalid JSON-RPC id: must be a string or a number', undefined, 400)
    const method = msg.method
    if (method === undefined) {
      if (id !== undefined && ('result' in msg || 'error' in msg)) { this.clientResponse(id as string | number, msg, ctx); return { status: 202 } }
      throw new McpError(INVALID_REQUEST, 'Missing method', undefined, 400)
    }
    if (typeof method !== 'string' || method === '') throw new McpError(INVALID_REQUEST, 'method must be a non-empty string', undefined, 400)
    const params = msg.params
    if (params !== undefined && !isObject(params)) throw new McpError(INVALID_REQUEST, 'params must be an object', undefined, 400)
    const meta = params?._meta
    const modern = (isObject(meta) && typeof meta[META_VERSION] === 'string') || method === 'server/discover' ||
      (method !== 'initialize' && ctx.headers !== undefined && ctx.headers['mcp-session-id'] === undefined && ctx.headers['mcp-protocol-version']?.trim() === MODERN_VERSION)
    for (const hook of this.beforeDispatch) { const r = hook({ method, params, id }, ctx); if (r !== undefined) await r }
    const result = modern ? await this.stateless(method, params, id, ctx) : await this.session(method, params, id, ctx)
    if (id === undefined || result === undefined) return { status: 202 }
    return { response: { jsonrpc: '2.0', id, result }, status: 200 }
  }

  private clientResponse (id: string | number, msg: JsonObject, ctx: CallContext): void {
    const s = ctx.session ?? this.sessionFromHeader(ctx)
    const p = s.pending.get(id)
    if (p === undefined) return
    s.pending.delete(id)
    if (msg.error !== undefined) p.reject(new Error(isObject(msg.error) && typeof msg.error.message === 'string' ? msg.error.message : 'client error'))
    else p.resolve(msg.result)
  }

  private sessionFromHeader (ctx: CallContext): Session {
    if (ctx.transport === 'ws') throw new McpError(SERVER_ERROR, 'Bad Request: send initialize first on this socket, or use the 2026-07-28 dialect (_meta on every request)', undefined, 400)
    const sid = ctx.headers?.['mcp-session-id']
    if (sid === undefined || sid === '') throw new McpError(SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required', undefined, 400)
    const s = this.sessions.get(sid)
    if (s === undefined || s.record.endpoint !== ctx.endpoint.path) throw new McpError(SESSION_NOT_FOUND, 'Session not found', undefined, 404)
    ctx.session = s
    return s
  }

  // --- session dialect (2024-11-05 … 2025-11-25) ---

  private async session (method: string, params: JsonObject | undefined, id: unknown, ctx: CallContext): Promise<JsonObject | undefined> {
    if (method === 'initialize') return this.initialize(params, ctx)
    const s = ctx.session ?? this.sessionFromHeader(ctx)
    const hv = ctx.headers?.['mcp-protocol-version']?.trim()
    if (hv !== undefined) {
      if (!(SESSION_VERSIONS as readonly string[]).includes(hv)) throw new McpError(SERVER_ERROR, `Bad Request: Unsupported protocol version: ${hv} (supported versions: ${SESSION_VERSIONS.join(', ')})`, undefined, 400)
      if (hv !== s.record.version) throw new McpError(INVALID_REQUEST, `MCP-Protocol-Version mismatch: session=${s.record.version}, header=${hv}`, undefined, 400)
    }
    if (id === undefined) { this.sessionNotification(method, params, s); return undefined }
    if (ctx.cancel === undefined) return await this.sessionMethod(method, params ?? {}, ctx, s)
    s.inflight.set(id as string | number, ctx.cancel)
    try {
      return await this.sessionMethod(method, params ?? {}, ctx, s)
    } finally {
      s.inflight.delete(id as string | number)
    }
  }

  private sessionNotification (method: string, params: JsonObject | undefined, s: Session): void {
    if (method === 'notifications/initialized') { if (!s.record.initialized) { s.record.initialized = true; this.sessions.save(s) } return }
    if (method === 'notifications/cancelled') {
      const rid = params?.requestId
      if (typeof rid === 'string' || typeof rid === 'number') s.inflight.get(rid)?.()
    }
  }

  private initialize (params: JsonObject | undefined, ctx: CallContext): JsonObject {
    const requested = params?.protocolVersion
    const version = typeof requested === 'string' && (SESSION_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_SESSION_VERSION
    const caps = isObject(params?.capabilities) ? params.capabilities : {}
    const info = isObject(params?.clientInfo) ? params.clientInfo : undefined
    const s = this.sessions.create(ctx.endpoint.path, version, caps, info, { principal: ctx.principal ?? null, ...(ctx.address !== undefined ? { address: ctx.address } : {}) })
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
    const out: JsonObject = { protocolVersion: version, capabilities, serverInfo: this.serverInfo(ctx) }
    if (this.opts.instructions !== undefined) out.instructions = this.opts.instructions
    return out
  }

  private async sessionMethod (method: string, p: JsonObject, ctx: CallContext, s: Session): Promise<JsonObject> {
    const view = this.registry.view(ctx.endpoint.agent)
    switch (method) {
      case 'ping': return {}
      case 'tools/list': return { tools: this.listedTools(ctx, s.record.version) }
      case 'tools/call': return await this.callTool(p, ctx, s.record.version)
      case 'resources/list': return { resources: view.resources.map(describeResource) }
      case 'resources/templates/list': return { resourceTemplates: view.templates.map(describeTemplate) }
      case 'resources/read': return await this.readResource(p, ctx, false)
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        if (typeof p.uri !== 'string') throw new McpError(INVALID_PARAMS, 'Missing resource URI')
        const subs = new Set(s.record.subscriptions)
        if (method === 'resources/subscribe') subs.add(p.uri); else subs.delete(p.uri)
        s.record.subscriptions = [...subs]
        this.sessions.save(s)
        return {}
      }
      case 'prompts/list': return { prompts: view.prompts.map(describePrompt) }
      case 'prompts/get': return await this.getPrompt(p, ctx, false)
      case 'completion/complete': return await this.complete(p, ctx)
      case 'logging/setLevel': {
        if (typeof p.level !== 'string' || !LOG_LEVELS.includes(p.level as LogLevel)) throw new McpError(INVALID_PARAMS, `Invalid log level: ${String(p.level)}`)
        s.record.logLevel = p.level as LogLevel
        this.sessions.save(s)
        return {}
      }
      case 'tasks/get': return legacyTask(this.legacyTaskOf(p, ctx))
      case 'tasks/cancel': { const t = this.legacyTaskOf(p, ctx); if (this.tasks.isTerminal(t)) throw new McpError(INVALID_PARAMS, `Cannot cancel task: already in terminal status '${t.status}'`); this.tasks.cancel(t); return legacyTask(t) }
      case 'tasks/result': {
        const t = this.legacyTaskOf(p, ctx)
        await this.tasks.settled(t)
        if (t.status === 'failed' && t.error !== undefined) throw new McpError(t.error.code, t.error.message, t.error.data)
        if (t.status === 'cancelled') throw new McpError(INVALID_REQUEST, `Task '${t.id}' was cancelled`)
        return { ...t.result, _meta: { 'io.modelcontextprotocol/related-task': { taskId: t.id } } }
      }
      case 'tasks/list': {
        const all = this.tasks.list(ctx.principal ?? null)
        const start = typeof p.cursor === 'string' ? Math.max(0, Number.parseInt(p.cursor, 10) || 0) : 0
        const page = all.slice(start, start + 100)
        const out: JsonObject = { tasks: page.map(legacyTask) }
        if (start + 100 < all.length) out.nextCursor = String(start + 100)
        return out
      }
      default: throw new McpError(METHOD_NOT_FOUND, `Method not found: ${method}`)
    }
  }

  private legacyTaskOf (p: JsonObject, ctx: CallContext): Task {
    if (typeof p.taskId !== 'string') throw new McpError(INVALID_PARAMS, 'Missing taskId')
    const t = this.tasks.get(p.taskId, ctx.principal ?? null)
    if (t === undefined) throw new McpError(INVALID_PARAMS, 'Failed to retrieve task: Task not found')
    return t
  }

  // --- stateless dialect (2026-07-28) ---

  private async stateless (method: string, params: JsonObject | undefined, id: unknown, ctx: CallContext): Promise<JsonObject | undefined> {
    if (id === undefined) return undefined
    if (!STATELESS_METHODS.has(method)) throw new McpError(METHOD_NOT_FOUND, `Method '${method}' is not available in the ${MODERN_VERSION} stateless dialect`, undefined, 404)
    const meta = params?._meta
    if (!isObject(meta)) throw new McpError(INVALID_PARAMS, 'Invalid _meta envelope: params._meta is required', undefined, 400)
    const version = meta[META_VERSION]
    if (typeof version !== 'string') throw new McpError(INVALID_PARAMS, `Invalid _meta envelope: ${META_VERSION} missing`, undefined, 400)
    if (!isObject(meta[META_CAPS])) throw new McpError(INVALID_PARAMS, `Invalid _meta envelope: ${META_CAPS} missing`, undefined, 400)
    if (meta[META_CLIENT] !== undefined && !isObject(meta[META_CLIENT])) throw new McpError(INVALID_PARAMS, `Invalid _meta envelope: ${META_CLIENT} must be an object`, undefined, 400)
    const level = meta[META_LOG_LEVEL]
    if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel)) throw new McpError(INVALID_PARAMS, `Invalid _meta envelope: ${META_LOG_LEVEL} must be a logging level`, undefined, 400)
    if (ctx.headers !== undefined) {
      const hv = ctx.headers['mcp-protocol-version']?.trim()
      if (hv !== version) throw new McpError(HEADER_MISMATCH, `MCP-Protocol-Version header '${hv ?? ''}' does not match _meta protocol version '${version}'`, undefined, 400)
    }
    if (version !== MODERN_VERSION) throw new McpError(UNSUPPORTED_VERSION, `Unsupported protocol version: ${version}`, { supported: [MODERN_VERSION], requested: version }, 400)
    if (ctx.headers !== undefined) checkRoutingHeaders(ctx.headers, method, params)
    ctx.meta = meta
    const caps = meta[META_CAPS] as JsonObject
    if (TASK_METHODS.has(method) && !hasTasksExtension(caps)) throw missingTasksExtension()
    const p = params as JsonObject
    let result: JsonObject
    switch (method) {
      case 'server/discover': result = this.discover(ctx); break
      case 'tools/list': result = { tools: this.listedTools(ctx, MODERN_VERSION) }; break
      case 'tools/call': result = await this.callTool(p, ctx, MODERN_VERSION); break
      case 'resources/list': result = { resources: this.registry.view(ctx.endpoint.agent).resources.map(describeResource) }; break
      case 'resources/templates/list': result = { resourceTemplates: this.registry.view(ctx.endpoint.agent).templates.map(describeTemplate) }; break
      case 'resources/read': result = await this.readResource(p, ctx, true); break
      case 'prompts/list': result = { prompts: this.registry.view(ctx.endpoint.agent).prompts.map(describePrompt) }; break
      case 'prompts/get': result = await this.getPrompt(p, ctx, true); break
      case 'completion/complete': result = await this.complete(p, ctx); break
      case 'subscriptions/listen': result = await this.subscriptions.listen(id as string | number, p, ctx); break
      case 'tasks/get': result = taskDetail(this.taskOf(p, ctx)); break
      case 'tasks/update': {
        const t = this.taskOf(p, ctx)
        if (!isObject(p.inputResponses)) throw new McpError(INVALID_PARAMS, 'inputResponses must be an object')
        this.tasks.update(t, p.inputResponses)
        result = {}
        break
      }
      default: { this.tasks.cancel(this.taskOf(p, ctx)); result = {} }
    }
    return this.decorate(method, result, ctx)
  }

  /** resultType first, caching hints on complete cacheable results, serverInfo in `_meta`. */
  private decorate (method: string, result: JsonObject, ctx: CallContext): JsonObject {
    const resultType = typeof result.resultType === 'string' ? result.resultType : 'complete'
    const out: JsonObject = { resultType }
    if (resultType === 'complete' && CACHEABLE.has(method)) { out.ttlMs = this.opts.cacheTtlMs; out.cacheScope = this.opts.cacheScope }
    // copied key by key: a rest destructuring builds one more object per request
    for (const k in result) if (k !== 'resultType' && k !== '_meta' && Object.hasOwn(result, k)) out[k] = result[k]
    const meta = result._meta
    out._meta = isObject(meta) ? { ...meta, [META_SERVER]: this.serverInfo(ctx) } : { [META_SERVER]: this.serverInfo(ctx) }
    return out
  }

  private discover (ctx: CallContext): JsonObject {
    const view = this.registry.view(ctx.endpoint.agent)
    const extensions: JsonObject = { [TASKS_EXT]: {} }
    if (view.tools.some((t) => t.uiResource !== undefined)) extensions[APPS_EXT] = { mimeTypes: [APP_MIME] }
    const out: JsonObject = {
      supportedVersions: SUPPORTED_ALL,
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true }, completions: {}, logging: {}, extensions }
    }
    if (this.opts.instructions !== undefined) out.instructions = this.opts.instructions
    return out
  }

  private taskOf (p: JsonObject, ctx: CallContext): Task {
    if (typeof p.taskId !== 'string') throw new McpError(INVALID_PARAMS, 'Missing taskId')
    const t = this.tasks.get(p.taskId, ctx.principal ?? null)
    if (t === undefined) throw new McpError(INVALID_PARAMS, `Unknown task: ${p.taskId}`)
    return t
  }

  // --- shared methods ---

  /** Cached per endpoint until the registry changes: every stateless result carries it. */
  private serverInfo (ctx: CallContext): JsonObject {
    const key = ctx.endpoint.agent ?? ''
    let info = this.infos.get(key)
    if (info === undefined) {
      const a = ctx.endpoint.agent === undefined ? undefined : this.platform.plugins.agents().find((x) => x.name === ctx.endpoint.agent)
      info = ctx.endpoint.agent === undefined ? { name: this.opts.serverName, version: this.opts.serverVersion } : { name: ctx.endpoint.agent, version: a?.version ?? this.opts.serverVersion }
      this.infos.set(key, info)
    }
    return info
  }

  /** The tools/list entries of an endpoint for one protocol version, built once per registry change. */
  private listedTools (ctx: CallContext, version: string): JsonObject[] {
    const key = `${ctx.endpoint.agent ?? ''}\0${version}`
    let list = this.lists.get(key)
    if (list === undefined) { list = this.registry.view(ctx.endpoint.agent).tools.map((t) => this.describeTool(t, version)); this.lists.set(key, list) }
    return list
  }

  private describeTool (t: ToolEntry, version: string): JsonObject {
    const out: JsonObject = { name: t.name }
    if (t.title !== undefined && version !== '2024-11-05' && version !== '2025-03-26') out.title = t.title
    // clients (and the conformance suite) expect a description: fall back to the title or name
    out.description = t.description !== '' ? t.description : (t.title ?? t.name)
    out.inputSchema = t.inputSchema
    if (t.iconUrl !== undefined && (version === '2025-11-25' || version === MODERN_VERSION)) out.icons = [{ src: t.iconUrl }]
    if (t.uiResource !== undefined) out._meta = { ui: { resourceUri: t.uiResource, visibility: ['model', 'app'] } }
    if (version === '2025-11-25' && t.taskSupport !== 'forbidden') out.execution = { taskSupport: t.taskSupport }
    return out
  }

  private async callTool (p: JsonObject, ctx: CallContext, version: string): Promise<JsonObject> {
    const name = p.name
    if (typeof name !== 'string' || name === '') throw new McpError(INVALID_PARAMS, 'Missing tool name')
    const tool = this.registry.view(ctx.endpoint.agent).toolsByName.get(name)
    if (tool === undefined) throw new McpError(INVALID_PARAMS, `Unknown tool: ${name}`)
    if (p.arguments !== undefined && !isObject(p.arguments)) throw new McpError(INVALID_PARAMS, 'arguments must be an object')
    let args: JsonObject = p.arguments ?? {}
    if ('_mcp' in args) { args = { ...args }; delete args._mcp }
    const modern = version === MODERN_VERSION
    if (modern && ctx.headers !== undefined) checkParamHeaders(ctx.headers, tool, args)
    const retry = retryInput(p, this.codec, 'tools/call', name, ctx.principal ?? null)
    if (!tool.validate(args)) {
      const msg = describeErrors(tool.validate)
      // SEP-1303 (2025-11-25+): input validation errors are tool execution errors
      if (version === '2025-11-25' || modern) return { content: [{ type: 'text', text: msg }], isError: true }
      throw new McpError(INVALID_PARAMS, msg)
    }
    const caps = clientCapabilities(ctx)
    const withExt = modern && hasTasksExtension(caps)
    if (modern && tool.taskSupport === 'required' && !withExt) throw missingTasksExtension()
    const gated = checkGate(this.platform.toolCallGate, name, args, ctx)
    if (gated !== undefined) await gated
    const argCount = Object.keys(args).length
    const runner: Runner = async (gathered, toolState, signal) => {
      const ictx = invokeContext(ctx, signal, p, gathered, toolState, caps)
      try {
        return valueOutcome(await this.wrap({ name, type: 'tool', argCount, ctx }, () => tool.invoke(args, ictx)))
      } catch (err) {
        return failureOutcome(err)
      }
    }
    if (withExt && tool.taskSupport !== 'forbidden') return await this.taskCall(runner, retry, ctx, name)
    if (!modern && isObject(p.task)) {
      if (version !== '2025-11-25' || tool.taskSupport === 'forbidden') throw new McpError(METHOD_NOT_FOUND, `Tool '${name}' does not support task execution`)
      return this.legacyTaskCall(runner, p.task, ctx)
    }
    const out = await runner(retry.gathered, retry.toolState, ctx.signal)
    const result = await this.settle(out, runner, retry, ctx, 'tools/call', name, modern)
    // before 2026-07-28 structuredContent must be an object: other JSON values travel as {result}
    if (!modern && result.structuredContent !== undefined && !isObject(result.structuredContent)) result.structuredContent = { result: result.structuredContent }
    return result
  }

  /** Complete → result; input required → an InputRequiredResult (stateless) or client requests (session). */
  private async settle (out: Outcome, runner: Runner, retry: RetryInput, ctx: CallContext, method: string, target: string, modern: boolean): Promise<JsonObject> {
    let gathered = retry.gathered
    let toolState = retry.toolState
    for (let round = 0; ; round++) {
      if (out.kind === 'complete') return out.result
      if (out.kind === 'error') throw new McpError(out.error.code, out.error.message, out.error.data)
      const caps = clientCapabilities(ctx)
      if (modern) {
        const inputRequests = filterInputRequests(out.inputRequests, caps)
        const requestState = this.codec.sign({ m: method, n: target, p: ctx.principal ?? null, ...(out.toolState !== undefined ? { s: out.toolState } : {}), ...(gathered !== undefined ? { r: gathered } : {}) })
        return { resultType: 'input_required', inputRequests, requestState }
      }
      const request = ctx.sink.request
      if (request === undefined) throw new McpError(INVALID_REQUEST, 'This call needs input from the client: accept text/event-stream on POST, or use the WebSocket transport')
      if (round >= 16) throw new McpError(INTERNAL_ERROR, 'Too many input rounds')
      const inputRequests = filterInputRequests(out.inputRequests, caps, 200)
      const answers = await Promise.all(Object.entries(inputRequests).map(async ([k, r]) => [k, await request(r.method as string, r.params ?? {}, ctx.signal)] as const))
      gathered = { ...gathered, ...Object.fromEntries(answers) }
      toolState = out.toolState
      out = await runner(gathered, toolState, ctx.signal)
    }
  }

  /** Tasks extension: run; if the tool settles within the sync window answer directly, else hand out a task. */
  private async taskCall (runner: Runner, retry: RetryInput, ctx: CallContext, name: string): Promise<JsonObject> {
    const t = this.tasks.create(ctx.principal ?? null)
    const first = runner(retry.gathered, retry.toolState, t.abort.signal)
    let timer: NodeJS.Timeout | undefined
    const early = await Promise.race([first, new Promise<undefined>((resolve) => { timer = setTimeout(() => { resolve(undefined) }, this.opts.syncWindowMs) })])
    clearTimeout(timer)
    if (early !== undefined && early.kind !== 'error') {
      this.tasks.forget(t)
      return await this.settle(early, runner, retry, ctx, 'tools/call', name, true)
    }
    // input a task asks for later is held to the same rule: only what the client declared
    const caps = clientCapabilities(ctx)
    const declared = (o: Outcome): Outcome => {
      if (o.kind !== 'input') return o
      try { return { ...o, inputRequests: filterInputRequests(o.inputRequests, caps) } } catch (err) {
        const e = err as McpError
        return { kind: 'error', error: { code: e.code, message: e.message, data: e.data } }
      }
    }
    const resumeRunner: Runner = async (g, s, signal) => declared(await runner({ ...retry.gathered, ...g }, s, signal))
    void this.tasks.drive(t, resumeRunner, first.then(declared)).catch(() => {})
    return { resultType: 'task', taskId: t.id, status: t.status, createdAt: t.createdAt, lastUpdatedAt: t.lastUpdatedAt, ttlMs: t.ttlMs, pollIntervalMs: t.pollIntervalMs }
  }

  /** 2025-11-25 experimental form: the client asked with `params.task`; its input goes over the GET stream. */
  private legacyTaskCall (runner: Runner, taskParams: JsonObject, ctx: CallContext): JsonObject {
    const ttl = typeof taskParams.ttl === 'number' && taskParams.ttl > 0 ? Math.min(taskParams.ttl, 3_600_000) : this.tasks.defaultTtlMs
    const t = this.tasks.create(ctx.principal ?? null, ttl)
    const s = ctx.session
    const sink: Sink = { notify: (m) => { s?.channel?.(m) } }
    if (s !== undefined) sink.request = async (method, params) => await this.requestOverChannel(s, method, params)
    const tctx: CallContext = { ...ctx, sink, signal: t.abort.signal }
    const sessionRunner: Runner = async (g, st, signal) => {
      const out = await runner(g, st, signal)
      try { return { kind: 'complete', result: await this.settle(out, runner, { ...(g !== undefined ? { gathered: g } : {}), toolState: st }, tctx, 'tools/call', '', false) } } catch (err) {
        return { kind: 'error', error: { code: err instanceof McpError ? err.code : INTERNAL_ERROR, message: (err as Error).message } }
      }
    }
    void this.tasks.drive(t, sessionRunner, sessionRunner(undefined, undefined, t.abort.signal)).catch(() => {})
    return { task: legacyTask(t) }
  }

  /** Sends a server-to-client request on a session's notification channel and awaits its answer. */
  async requestOverChannel (s: Session, method: string, params: unknown): Promise<unknown> {
    if (s.channel === undefined) throw new McpError(INVALID_REQUEST, 'No open stream to send a request to the client on')
    const id = s.newRequestId()
    return await new Promise((resolve, reject) => {
      s.pending.set(id, { resolve, reject })
      if (!s.channel!({ jsonrpc: '2.0', id, method, params })) { s.pending.delete(id); reject(new Error('client stream closed')) }
    })
  }

  private async readResource (p: JsonObject, ctx: CallContext, modern: boolean): Promise<JsonObject> {
    const uri = p.uri
    if (typeof uri !== 'string' || uri === '') throw new McpError(INVALID_PARAMS, 'Missing resource URI')
    const entry = findResource(this.registry.view(ctx.endpoint.agent), uri)
    // SEP-2164: -32602 from 2026-07-28 on; -32002 before
    if (entry === undefined) throw new McpError(modern ? INVALID_PARAMS : RESOURCE_NOT_FOUND_LEGACY, `Resource not found: ${uri}`, { uri })
    const retry = retryInput(p, this.codec, 'resources/read', uri, ctx.principal ?? null)
    const caps = clientCapabilities(ctx)
    const runner: Runner = async (g, st, signal) => {
      const ictx = invokeContext(ctx, signal, p, g, st, caps)
      try {
        const v = await this.wrap({ name: uri, type: 'resource', argCount: 1, ctx }, () => entry.read(uri, ictx))
        const o = valueOutcome(v)
        return o.kind === 'input' ? o : { kind: 'complete', result: { contents: toContents(v, uri, entry.mimeType) } }
      } catch (err) {
        return { kind: 'error', error: { code: INTERNAL_ERROR, message: `Failed to read resource ${uri}: ${(err as Error).message}` } }
      }
    }
    return await this.settle(await runner(retry.gathered, retry.toolState, ctx.signal), runner, retry, ctx, 'resources/read', uri, modern)
  }

  private async getPrompt (p: JsonObject, ctx: CallContext, modern: boolean): Promise<JsonObject> {
    const name = p.name
    if (typeof name !== 'string' || name === '') throw new McpError(INVALID_PARAMS, 'Missing prompt name')
    const prompt = this.registry.view(ctx.endpoint.agent).promptsByName.get(name)
    if (prompt === undefined) throw new McpError(INVALID_PARAMS, `Unknown prompt: ${name}`)
    if (p.arguments !== undefined && !isObject(p.arguments)) throw new McpError(INVALID_PARAMS, 'arguments must be an object')
    const args: Record<string, string> = {}
    for (const [k, v] of Object.entries(p.arguments ?? {})) {
      if (k === '_mcp') continue
      if (typeof v !== 'string') throw new McpError(INVALID_PARAMS, `Prompt argument '${k}' must be a string`)
      args[k] = v
    }
    for (const a of prompt.arguments) if (a.required === true && args[a.name] === undefined) throw new McpError(INVALID_PARAMS, `Missing required argument: ${a.name}`)
    const retry = retryInput(p, this.codec, 'prompts/get', name, ctx.principal ?? null)
    const caps = clientCapabilities(ctx)
    const runner: Runner = async (g, st, signal) => {
      const ictx = invokeContext(ctx, signal, p, g, st, caps)
      try {
        const v = await this.wrap({ name, type: 'prompt', argCount: Object.keys(args).length, ctx }, () => prompt.get(args, ictx))
        const o = valueOutcome(v)
        return o.kind === 'input' ? o : { kind: 'complete', result: toPromptResult(v, prompt.description) }
      } catch (err) {
        return { kind: 'error', error: { code: INTERNAL_ERROR, message: `Prompt '${name}' failed: ${(err as Error).message}` } }
      }
    }
    return await this.settle(await runner(retry.gathered, retry.toolState, ctx.signal), runner, retry, ctx, 'prompts/get', name, modern)
  }

  private async complete (p: JsonObject, ctx: CallContext): Promise<JsonObject> {
    const ref = p.ref
    const arg = p.argument
    if (!isObject(ref) || !isObject(arg) || typeof arg.name !== 'string') throw new McpError(INVALID_PARAMS, 'completion/complete needs ref and argument {name, value}')
    let values: string[] = []
    if (ref.type === 'ref/prompt') {
      const prompt = this.registry.view(ctx.endpoint.agent).promptsByName.get(ref.name as string)
      if (prompt === undefined) throw new McpError(INVALID_PARAMS, `Unknown prompt: ${String(ref.name)}`)
      if (prompt.complete !== undefined) values = await prompt.complete(arg.name, typeof arg.value === 'string' ? arg.value : '')
    } else if (ref.type !== 'ref/resource') {
      throw new McpError(INVALID_PARAMS, `Unknown completion reference type: ${String(ref.type)}`)
    }
    values = values.slice(0, 100)
    return { completion: { values, total: values.length, hasMore: false } }
  }
}
