/**
 * The A2A JSON-RPC endpoint of every agent at `{agent path}/a2a` (POST; the streaming methods
 * answer as Server-Sent Events), and its Agent Card at `{agent path}/.well-known/agent-card.json`
 * and `{agent path}/a2a/.well-known/agent-card.json`. Callers authenticate as on the other agent
 * endpoints (`platform.ai.endpoint.auth`); the card is public, as discovery needs.
 */
import { createHash } from 'node:crypto'
import type { Platform } from '../platform.js'
import { clientAddress, parseJsonBody, type Context } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { AGENT_BASE, AgentPathRoutes, agentChatPath } from '../ai/index.js'
import { agentCard, agentCard03, originOf, type CardOptions } from './agent-card.js'
import { A2aMethods, METHODS, STREAMING, type Caller, type EventSink } from './a2a-methods.js'
import { V03_METHODS, V03_VERSIONS, eventTo03, paramsTo10, resultTo03 } from './v03-shapes.js'
import type { StreamResponse } from './a2a-types.js'
import { a2aFailure, rpcErrorBody } from './rpc-error.js'
import { A2A_ERRORS } from './errors.js'
import { AI_ERRORS } from '../ai/index.js'

const JSON_TYPE = 'application/json'
const CARD = '.well-known/agent-card.json'
/** Where 0.3 clients look for the card. */
const CARD_03 = '.well-known/agent.json'
/** The 1.0 versions a request may name in `A2A-Version`; none named is served as its method name says. */
const VERSIONS = new Set(['1.0', '1'])

type CardBuilder = (agent: RegisteredAgent, o: CardOptions) => Record<string, unknown>

export interface A2aEndpointOptions {
  /** Whether the cards advertise push notifications (webhooks are on, with a secret). */
  pushNotifications: boolean
  publicUrl: string | undefined
  allTasksRole: string | undefined
  rootAgent: string | undefined
}

export interface A2aEndpoint {
  /** Where an agent's A2A endpoint is, or undefined when it is not served. */
  pathOf(agent: RegisteredAgent): string | undefined
}

export function a2aPath(agent: { name: string; endpoint?: string }): string {
  return `${agentChatPath(agent)}/a2a`
}

/** A body over the message limit, refused (413) before it is read whole, so before any task exists. */
function tooLarge(limit: number): { body: string; contentType: string } {
  const err = new PlatformError(A2A_ERRORS.A2A_MESSAGE_TOO_LARGE, { limit }, { data: { limitBytes: String(limit) } })
  return { body: rpcErrorBody(null, err), contentType: JSON_TYPE }
}

export function installA2aEndpoint(platform: Platform, methods: A2aMethods, o: A2aEndpointOptions): A2aEndpoint {
  const { http, config, logger } = platform
  const paths = new AgentPathRoutes(platform, { suffix: 'a2a', label: 'A2A' })
  const authRequired = (): boolean => config.get('platform.ai.endpoint.auth') === 'required'

  const rpc = async (ctx: Context, path: string): Promise<void> => {
    let id: unknown = null
    // every failure on this endpoint, refusals before dispatch included, answers in the JSON-RPC
    // shape with its code's HTTP status: one body shape per endpoint
    const fail = (err: unknown): void => {
      const e = a2aFailure(err)
      if (e.headers !== undefined) for (const [k, v] of Object.entries(e.headers)) ctx.setHeader(k, v)
      ctx.send(e.status, rpcErrorBody(id, e), JSON_TYPE)
    }
    const principal = platform.principals.resolve(ctx)
    if (principal === null && authRequired()) {
      fail(new PlatformError(AI_ERRORS.AGENT_AUTH_REQUIRED, { path }, { headers: { 'www-authenticate': 'Bearer' } }))
      return
    }
    const agent = paths.agentAt(path)
    if (agent === undefined) {
      fail(new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: path }))
      return
    }
    let msg: unknown
    try {
      msg = parseJsonBody(ctx.rawBody ?? Buffer.alloc(0), config.get('platform.server.json-max-depth'))
    } catch (err) {
      fail(new PlatformError(A2A_ERRORS.A2A_PARSE_ERROR, { detail: (err as Error).message }))
      return
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      fail(
        new PlatformError(A2A_ERRORS.A2A_INVALID_REQUEST, {
          detail: 'Request payload validation error: send one JSON-RPC request object (batches are not supported)'
        })
      )
      return
    }
    const req = msg as Record<string, unknown>
    if (typeof req.id === 'string' || typeof req.id === 'number') id = req.id
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string' || id === null) {
      fail(
        new PlatformError(A2A_ERRORS.A2A_INVALID_REQUEST, {
          detail:
            "Request payload validation error: a request needs jsonrpc '2.0', a string method and a string or number id"
        })
      )
      return
    }
    const version = ctx.header('a2a-version')
    const named = version !== undefined && version !== ''
    if (named && !VERSIONS.has(version) && !V03_VERSIONS.has(version)) {
      fail(new PlatformError(A2A_ERRORS.A2A_VERSION_NOT_SUPPORTED, { version }, { data: { version } }))
      return
    }
    const method = V03_METHODS[req.method] ?? req.method
    // the shapes follow the version the header names, else the version the method's name is from
    const v03 = named ? V03_VERSIONS.has(version) : method !== req.method
    const params = v03 ? paramsTo10(method, req.params) : req.params
    if (!METHODS.has(method)) {
      fail(new PlatformError(A2A_ERRORS.A2A_METHOD_NOT_FOUND, { method: req.method }))
      return
    }
    const roles = principal?.roles ?? []
    const caller: Caller = {
      agent: agent.name,
      viewer: {
        principal: principal?.name ?? null,
        all: o.allTasksRole !== undefined && roles.includes(o.allTasksRole)
      },
      userId: principal?.name,
      v03,
      ...clientAddress(ctx)
    }
    try {
      if (STREAMING.has(method)) {
        const write = await methods.stream(method, params, caller)
        // a client gone meanwhile gets no stream; a task it sent still runs
        write(ctx.aborted ? undefined : sseSink(ctx, id, v03 ? eventTo03 : undefined))
        return
      }
      const result = await methods.unary(method, params, caller)
      ctx.send(
        200,
        JSON.stringify({ jsonrpc: '2.0', id, result: v03 ? resultTo03(method, result) : result }),
        JSON_TYPE
      )
    } catch (err) {
      if (!isWireError(err)) logger.error({ err, agent: agent.name, method }, 'A2A method failed')
      fail(err)
    }
  }

  const card = (ctx: Context, agent: RegisteredAgent | undefined, path: string, build: CardBuilder): void => {
    if (agent === undefined) throw new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: path })
    const body = JSON.stringify(
      build(agent, {
        url: `${originOf(ctx.headers, o.publicUrl)}${paths.pathFor(agent)}`,
        authRequired: authRequired(),
        pushNotifications: o.pushNotifications
      })
    )
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
    ctx.setHeader('cache-control', 'max-age=60')
    ctx.setHeader('etag', etag)
    if (ctx.header('if-none-match') === etag) ctx.empty(304)
    else ctx.send(200, body, JSON_TYPE)
  }

  // a web page can reach it: the browser-origin rule applies before the body is read; a message is
  // bounded as on the other agent endpoints; the server's body limit caps it there too
  const bodyLimit = Math.min(
    config.get('platform.ai.endpoint.max-message-bytes'),
    config.get('platform.server.body-limit-bytes')
  )
  const rpcOpts = { body: 'raw' as const, optionalBody: true, tooLarge, bodyLimit, checkOrigin: true }
  http.post(`${AGENT_BASE}/{name}/a2a`, (ctx) => rpc(ctx, `${AGENT_BASE}/${ctx.params.name}/a2a`), rpcOpts)
  const builders: [string, CardBuilder][] = [
    [CARD, agentCard],
    [CARD_03, agentCard03]
  ]
  for (const [file, build] of builders)
    for (const suffix of [file, `a2a/${file}`])
      http.get(`${AGENT_BASE}/{name}/${suffix}`, (ctx) => {
        const p = `${AGENT_BASE}/${ctx.params.name}/a2a`
        card(ctx, paths.agentAt(p), p, build)
      })
  // the host's own card: the agent `platform.a2a.root-agent` names, else the only agent there is
  const rootCard = (ctx: Context, build: CardBuilder): void => {
    const all = [...paths.agents().values()]
    const root =
      o.rootAgent !== undefined ? all.find((a) => a.name === o.rootAgent) : all.length === 1 ? all[0] : undefined
    if (root === undefined)
      throw new PlatformError(A2A_ERRORS.A2A_NO_ROOT_AGENT, {
        detail:
          o.rootAgent !== undefined
            ? `platform.a2a.root-agent names '${o.rootAgent}', which no loaded plugin contributes`
            : `${all.length} agents are served and platform.a2a.root-agent names none of them`
      })
    card(ctx, root, paths.pathFor(root), build)
  }
  for (const [file, build] of builders)
    http.get(`/${file}`, (ctx) => {
      rootCard(ctx, build)
    })

  // an agent whose `endpoint` names its own path gets its A2A routes there, mounted as it appears
  paths.serveCustomPaths((p) => {
    http.post(p, (ctx) => rpc(ctx, p), rpcOpts)
    for (const [file, build] of builders)
      http.get(`${p}/${file}`, (ctx) => {
        card(ctx, paths.agentAt(p), p, build)
      })
  })
  return { pathOf: (agent) => paths.pathOf(agent) }
}

/**
 * A StreamResponse stream as SSE `data:` frames, each a JSON-RPC response carrying the request's
 * id; `shape` rewrites each event for a 0.3 client.
 */
function sseSink(ctx: Context, id: unknown, shape?: (e: StreamResponse) => unknown): EventSink {
  const stream = ctx.sse()
  return {
    send: (e) => {
      stream.send({ data: JSON.stringify({ jsonrpc: '2.0', id, result: shape === undefined ? e : shape(e) }) })
    },
    close: () => {
      stream.close()
    },
    onClose: (fn) => {
      stream.onClose(fn)
    }
  }
}
