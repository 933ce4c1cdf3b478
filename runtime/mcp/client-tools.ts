import { randomUUID } from 'node:crypto'
import type { Platform } from '../platform.js'
import type { Context } from '../http/index.js'
import type { McpServer } from './mcp-server.js'
import { AreaKey, PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import type { Session } from './sessions.js'
import { isObject } from './types.js'

export const TOOL_RESPONSE_PATH = '/_mcp/tool-response'

interface Pending {
  tool: string
  session: Session
  timer: NodeJS.Timeout
  resolve: (v: unknown) => void
  reject: (e: Error) => void
}

/**
 * Server-to-client tool calls. A call goes out as a
 * JSON-RPC `tools/call` request whose id is a fresh UUID, on the session's channel: its WebSocket
 * or its GET SSE stream. The answer comes back as a JSON-RPC response: a WebSocket frame, a POST to
 * the MCP endpoint with the session's Mcp-Session-Id, or (when enabled) a POST to /_mcp/tool-response.
 */
export class ClientToolBridge {
  private readonly pending = new Map<string, Pending>()

  constructor(
    private readonly core: McpServer['core'],
    readonly timeoutMs: number
  ) {}

  get inFlight(): number {
    return this.pending.size
  }

  /** Calls `toolName` on the client behind `resource` (a session id or Session); resolves with its result. */
  async callClientTool(
    resource: string | Session,
    toolName: string,
    args: Record<string, unknown> = {},
    opts: { timeoutMs?: number } = {}
  ): Promise<unknown> {
    const s = typeof resource === 'string' ? this.core.sessions.get(resource) : resource
    if (s === undefined) throw new Error(`no MCP session '${String(resource)}'`)
    if (s.channel === undefined)
      throw new Error(`MCP session '${s.id}' has no open stream to the client (open the GET stream or use WebSocket)`)
    const id = randomUUID()
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.drop(id)) reject(new PlatformError(MCP_ERRORS.MCP_CLIENT_TOOL_TIMEOUT, { toolName, timeoutMs }))
      }, timeoutMs)
      timer.unref()
      const p: Pending = { tool: toolName, session: s, timer, resolve, reject }
      this.pending.set(id, p)
      // the core resolves session requests by id when the answer arrives on the session (WS frame, POST)
      s.pending.set(id, {
        resolve: (v) => {
          this.settle(id, { result: v })
        },
        reject: (e) => {
          if (this.drop(id))
            reject(new PlatformError(MCP_ERRORS.MCP_CLIENT_TOOL_FAILED, { toolName, detail: e.message }))
        }
      })
      if (!s.channel!({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: toolName, arguments: args } })) {
        if (this.drop(id)) reject(new Error(`the stream of MCP session '${s.id}' is closed`))
      }
    })
  }

  /** An answer from any route: `{id, result}` or `{id, error}`; false when the id is not pending. */
  settle(id: string, answer: { result?: unknown; error?: unknown }): boolean {
    const p = this.pending.get(id)
    if (p === undefined || !this.drop(id)) return false
    if (answer.error !== undefined) {
      const e = isObject(answer.error) ? answer.error : {}
      p.reject(
        new PlatformError(MCP_ERRORS.MCP_CLIENT_TOOL_FAILED, {
          toolName: p.tool,
          detail: typeof e.message === 'string' ? e.message : 'client tool failed',
          code: typeof e.code === 'number' ? e.code : undefined,
          data: e.data
        })
      )
    } else if (isObject(answer.result) && answer.result.isError === true) {
      const text = Array.isArray(answer.result.content)
        ? answer.result.content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('')
        : ''
      p.reject(
        new PlatformError(MCP_ERRORS.MCP_CLIENT_TOOL_FAILED, {
          toolName: p.tool,
          detail: text !== '' ? text : 'client tool reported isError',
          result: answer.result
        })
      )
    } else {
      p.resolve(answer.result)
    }
    return true
  }

  private drop(id: string): boolean {
    const p = this.pending.get(id)
    if (p === undefined) return false
    this.pending.delete(id)
    clearTimeout(p.timer)
    p.session.pending.delete(id)
    return true
  }

  close(): void {
    for (const [id, p] of [...this.pending]) if (this.drop(id)) p.reject(new Error('server shutting down'))
  }
}

/** The server-to-client tool bridge, provided by the mcp-extras area. */
export const CLIENT_TOOLS = new AreaKey<ClientToolBridge>('mcp-client-tools')

/** The bridge of a platform, for code that wants to call a client's tools. */
export function getClientTools(platform: Platform): ClientToolBridge | undefined {
  return platform.hasArea(CLIENT_TOOLS) ? platform.area(CLIENT_TOOLS) : undefined
}

export function installClientTools(platform: Platform, mcp: McpServer): ClientToolBridge {
  const bridge = new ClientToolBridge(mcp.core, platform.config.get('platform.mcp.client-tools.timeout-ms'))
  platform.provide(CLIENT_TOOLS, bridge)
  platform.onClose(() => {
    bridge.close()
  })
  if (platform.config.get('platform.mcp.client-tools.response-route')) {
    // the UUID is the capability: only the client that received the call knows it
    platform.http.post(
      TOOL_RESPONSE_PATH,
      (ctx: Context) => {
        const b = ctx.body
        if (!isObject(b) || typeof b.id !== 'string' || (!('result' in b) && !('error' in b))) {
          ctx.send(
            400,
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32600, message: 'expected a JSON-RPC response {id, result} or {id, error}' }
            }),
            'application/json'
          )
          return
        }
        if (!bridge.settle(b.id, b)) {
          ctx.send(
            404,
            JSON.stringify({
              jsonrpc: '2.0',
              id: b.id,
              error: { code: -32602, message: `no pending client tool call '${b.id}'` }
            }),
            'application/json'
          )
          return
        }
        ctx.empty(202)
      },
      { body: 'json' }
    )
  }
  return bridge
}
