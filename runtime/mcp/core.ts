import type { Platform } from '../platform.js'
import type { CancelSignal } from '../plugins/index.js'
import type { Context } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import { HttpStatus, MCP_ERRORS } from './errors.js'
import type { InvocationWrapper } from './calls.js'
import type { McpRegistry } from './registry.js'
import type { ToolEntry } from './entries.js'
import type { RequestStateCodec } from './request-state.js'
import type { SessionStore, Session } from './sessions.js'
import { callerOf } from './session-quota.js'
import type { TaskManager, TaskRecord } from './tasks.js'
import { Subscriptions } from './subscriptions.js'
import type { CoreOptions, CoreState } from './core-state.js'
import { sessionDispatch } from './session-dialect.js'
import { statelessDispatch } from './stateless-dialect.js'
import { isObject, MODERN_VERSION, META_VERSION, type CallContext, type EndpointRef, type JsonObject } from './types.js'

/** The outcome of one message: a response (or none for notifications and client responses) and the HTTP status. */
export interface Handled {
  response?: JsonObject
  status: number
}

/**
 * A hook that runs before any method is dispatched (the place for OAuth); throw a PlatformError
 * with an `rpcCode` to reject.
 */
export type BeforeDispatch = (
  msg: { method: string; params: JsonObject | undefined; id: unknown },
  ctx: CallContext
) => void | Promise<void>

/**
 * Runs before an HTTP request (POST, GET, DELETE) reaches the MCP endpoint; false means the guard
 * has answered it (OAuth 401/403). Unlike BeforeDispatch it also covers GET streams and DELETE.
 */
export type HttpGuard = (ctx: Context, endpoint: EndpointRef) => boolean | Promise<boolean>

/**
 * What other code adds around dispatch, read on every request: the install hands in readers of
 * the MCP area's extension points, so the hooks are never set on the core after install.
 */
export interface McpHooks {
  beforeDispatch(): readonly BeforeDispatch[]
  httpGuards(): readonly HttpGuard[]
  wrap(): InvocationWrapper
}

/** The LMDB database handed-out tasks are kept in. */
const TASKS_DB = 'mcp-tasks'

/** Status of a message that has no response (a notification or a client's response). */
const ACCEPTED = 202

/**
 * The transport-independent JSON-RPC core. One message in, one response out; the dialect is chosen
 * per request (MCP 2026-07-28 versioning): a protocol version in `params._meta` or `server/discover`
 * → stateless (stateless-dialect.ts); everything else → the session dialect (session-dialect.ts:
 * initialize, Mcp-Session-Id). The state both share lives here.
 */
export class McpCore implements CoreState {
  readonly subscriptions = new Subscriptions()
  private readonly infos = new Map<string, JsonObject>()
  private readonly lists = new Map<string, JsonObject[]>()

  constructor(
    readonly platform: Platform,
    readonly registry: McpRegistry,
    readonly sessions: SessionStore,
    readonly tasks: TaskManager,
    readonly codec: RequestStateCodec,
    readonly opts: CoreOptions,
    private readonly hooks: McpHooks
  ) {
    registry.onChange(() => {
      this.infos.clear()
      this.lists.clear()
      this.subscriptions.changed(this.sessions.liveSessions())
    })
    // a shared store (cluster mode) was given to the tasks before: this node's LMDB is the default
    if (!tasks.isShared)
      tasks.persistIn(platform.store.db<TaskRecord, string>(TASKS_DB), (err) => {
        platform.logger.error({ err, area: 'mcp' }, 'MCP task write to LMDB failed')
      })
  }

  /** The guards every HTTP request to an MCP endpoint passes first (OAuth). */
  get httpGuards(): readonly HttpGuard[] {
    return this.hooks.httpGuards()
  }

  /** Wraps each tools/call, resources/read and prompts/get (tracing spans). */
  get wrap(): InvocationWrapper {
    return this.hooks.wrap()
  }

  async handle(msg: unknown, ctx: CallContext): Promise<Handled> {
    if (Array.isArray(msg))
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, {
        detail: 'JSON-RPC batching is not supported (removed in MCP 2025-06-18)'
      })
    if (!isObject(msg) || msg.jsonrpc !== '2.0')
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, {
        detail: "Invalid JSON-RPC message: expected an object with jsonrpc '2.0'"
      })
    const id = msg.id
    if (id !== undefined && typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id)))
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, {
        detail: 'Invalid JSON-RPC id: must be a string or a number'
      })
    const method = msg.method
    if (method === undefined) {
      if (id !== undefined && ('result' in msg || 'error' in msg)) {
        this.clientResponse(id as string | number, msg, ctx)
        return { status: ACCEPTED }
      }
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, { detail: 'Missing method' })
    }
    if (typeof method !== 'string' || method === '')
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, { detail: 'method must be a non-empty string' })
    const params = msg.params
    if (params !== undefined && !isObject(params))
      throw new PlatformError(MCP_ERRORS.MCP_BAD_MESSAGE, { detail: 'params must be an object' })
    const meta = params?._meta
    const modern =
      (isObject(meta) && typeof meta[META_VERSION] === 'string') ||
      method === 'server/discover' ||
      (method !== 'initialize' &&
        ctx.headers !== undefined &&
        ctx.headers['mcp-session-id'] === undefined &&
        ctx.headers['mcp-protocol-version']?.trim() === MODERN_VERSION)
    for (const hook of this.hooks.beforeDispatch()) {
      const r = hook({ method, params, id }, ctx)
      if (r !== undefined) await r
    }
    const result = modern
      ? await statelessDispatch(this, method, params, id, ctx)
      : await sessionDispatch(this, method, params, id, ctx)
    if (id === undefined || result === undefined) return { status: ACCEPTED }
    return { response: { jsonrpc: '2.0', id, result }, status: HttpStatus.InBand }
  }

  private clientResponse(id: string | number, msg: JsonObject, ctx: CallContext): void {
    const s = ctx.session ?? this.sessionFromHeader(ctx)
    if (ctx.transport === 'ws' && !this.sessions.ownedBy(s, callerOf(ctx)))
      throw new PlatformError(MCP_ERRORS.MCP_SESSION_NOT_FOUND)
    // a request another node sent (the balancer brought the answer here): on to that node
    if (!s.answer(id, msg)) this.sessions.forwardAnswer(s, id, msg)
  }

  sessionFromHeader(ctx: CallContext): Session {
    if (ctx.transport === 'ws')
      throw new PlatformError(MCP_ERRORS.MCP_SESSION_REQUIRED, {
        detail:
          'Bad Request: send initialize first on this socket, or use the 2026-07-28 dialect (_meta on every request)'
      })
    const sid = ctx.headers?.['mcp-session-id']
    if (sid === undefined || sid === '')
      throw new PlatformError(MCP_ERRORS.MCP_SESSION_REQUIRED, {
        detail: 'Bad Request: Mcp-Session-Id header is required'
      })
    const s = this.sessions.owned(sid, callerOf(ctx))
    if (s === undefined || s.record.endpoint !== ctx.endpoint.path)
      throw new PlatformError(MCP_ERRORS.MCP_SESSION_NOT_FOUND)
    ctx.session = s
    return s
  }

  async requestOverChannel(s: Session, method: string, params: unknown, signal?: CancelSignal): Promise<unknown> {
    // with a store several nodes share, the session's stream may be held by another node: relayed there
    if (s.channel === undefined && s.relay === undefined)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_REQUEST, {
        detail: 'No open stream to send a request to the client on'
      })
    const id = s.newRequestId()
    // a relayed request may find no stream anywhere: the call it belongs to ending drops it
    let onAbort: (() => void) | undefined
    try {
      return await new Promise((resolve, reject) => {
        s.pending.set(id, { resolve, reject })
        onAbort = () => {
          if (s.pending.delete(id)) reject(new Error('the request was cancelled'))
        }
        signal?.addEventListener('abort', onAbort)
        const msg = { jsonrpc: '2.0', id, method, params }
        if (s.channel === undefined) s.notify(msg)
        else if (!s.channel(msg)) {
          s.pending.delete(id)
          reject(new Error('client stream closed'))
        }
      })
    } finally {
      // the call may outlive its answer by much: its cancellation keeps no listener of a settled request
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
    }
  }

  serverInfo(ctx: CallContext): JsonObject {
    const key = ctx.endpoint.agent ?? ''
    let info = this.infos.get(key)
    if (info === undefined) {
      const a =
        ctx.endpoint.agent === undefined
          ? undefined
          : this.platform.plugins.agents().find((x) => x.name === ctx.endpoint.agent)
      info =
        ctx.endpoint.agent === undefined
          ? { name: this.opts.serverName, version: this.opts.serverVersion }
          : { name: ctx.endpoint.agent, version: a?.version ?? this.opts.serverVersion }
      this.infos.set(key, info)
    }
    return info
  }

  listedTools(ctx: CallContext, version: string): JsonObject[] {
    const key = `${ctx.endpoint.agent ?? ''}\0${version}`
    let list = this.lists.get(key)
    if (list === undefined) {
      list = this.registry.view(ctx.endpoint.agent).tools.map((t) => describeTool(t, version))
      this.lists.set(key, list)
    }
    return list
  }
}

function describeTool(t: ToolEntry, version: string): JsonObject {
  const out: JsonObject = { name: t.name }
  if (t.title !== undefined && version !== '2024-11-05' && version !== '2025-03-26') out.title = t.title
  // clients (and the conformance suite) expect a description: fall back to the title or name
  out.description = t.description !== '' ? t.description : (t.title ?? t.name)
  out.inputSchema = t.inputSchema
  if (t.iconUrl !== undefined && (version === '2025-11-25' || version === MODERN_VERSION))
    out.icons = [{ src: t.iconUrl }]
  if (t.uiResource !== undefined) out._meta = { ui: { resourceUri: t.uiResource, visibility: ['model', 'app'] } }
  if (version === '2025-11-25' && t.taskSupport !== 'forbidden') out.execution = { taskSupport: t.taskSupport }
  return out
}
