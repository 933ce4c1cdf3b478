import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { z } from 'zod'

/** What /api/admin/mcp/servers says of one server. */
export interface ServerStatus {
  name: string
  state: string
  error: string | null
  expose: boolean
  tools: { name: string }[]
  refused: string[]
}

export async function serverStatus(base: string, name: string): Promise<ServerStatus | undefined> {
  const all = (await (await fetch(`${base}/api/admin/mcp/servers`)).json()) as ServerStatus[]
  return all.find((s) => s.name === name)
}

/** Polls the admin until `pred` holds for server `name` (the platform reconnects in the background). */
export async function untilServer(
  base: string,
  name: string,
  pred: (s: ServerStatus) => boolean,
  what: string
): Promise<ServerStatus> {
  for (let i = 0; i < 600; i++) {
    const s = await serverStatus(base, name)
    if (s !== undefined && pred(s)) return s
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`MCP server '${name}': ${what} never happened`)
}

/**
 * An MCP server written with the official SDK, served over Streamable HTTP on 127.0.0.1 (stateless:
 * one SDK server per request). `hang` never answers and resolves `entered` when a call reaches it,
 * so a test can kill the server mid-call; `stop` and `restart` (same port) simulate an outage.
 * `count` sends two progress notifications (its answer is an SSE stream) when the call carries a
 * progress token.
 */
export class NotesServer {
  port = 0
  /** The Authorization header of each request. */
  readonly auth: (string | undefined)[] = []
  /** The `_meta` of each tools/call, in order (undefined when the call had none). */
  readonly metas: unknown[] = []
  calls = 0
  private server: Server | undefined
  private entered: (() => void) | undefined
  private cancelled: ((requestId: unknown) => void) | undefined

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`
  }

  /** Resolves when a `hang` call arrives. */
  hangEntered(): Promise<void> {
    return new Promise((resolve) => {
      this.entered = resolve
    })
  }

  /** Resolves with the request id of the next notifications/cancelled that arrives. */
  cancelArrived(): Promise<unknown> {
    return new Promise((resolve) => {
      this.cancelled = resolve
    })
  }

  private build(): McpServer {
    const s = new McpServer({ name: 'fixture-notes', version: '1.0.0' })
    s.registerTool('read', { description: 'Reads a note', inputSchema: { id: z.string() } }, async ({ id }) => {
      this.calls++
      return { content: [{ type: 'text', text: `note ${id}: buy milk` }] }
    })
    s.registerTool('delete', { description: 'Deletes every note' }, async () => ({
      content: [{ type: 'text', text: 'deleted' }]
    }))
    s.registerTool('hang', { description: 'Never answers' }, () => {
      this.entered?.()
      return new Promise(() => {})
    })
    s.registerTool('count', { description: 'Counts to two, reporting progress' }, async (extra) => {
      const progressToken = extra._meta?.progressToken
      if (progressToken !== undefined)
        for (const progress of [1, 2])
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 2 }
          })
      return { content: [{ type: 'text', text: 'counted' }] }
    })
    s.registerResource('readme', 'notes://readme', { mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, text: 'the notes server' }]
    }))
    s.registerPrompt('summary', { description: 'Summarise notes', argsSchema: { topic: z.string() } }, ({ topic }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `summarise notes on ${topic}` } }]
    }))
    return s
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.auth.push(req.headers.authorization)
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const body = text === '' ? undefined : (JSON.parse(text) as { method?: string; params?: Record<string, any> })
    if (body?.method === 'tools/call') this.metas.push(body.params?._meta)
    if (body?.method === 'notifications/cancelled') this.cancelled?.(body.params?.requestId)
    const mcp = this.build()
    // progress travels only on an SSE answer: `count` gets one
    const sse = body?.method === 'tools/call' && body.params?.name === 'count'
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !sse })
    res.on('close', () => {
      void transport.close()
      void mcp.close()
    })
    await mcp.connect(transport)
    await transport.handleRequest(req, res, body)
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => res.destroy())
    })
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
    return this
  }

  /** Stops at once: open requests (a hanging call) lose their connection. */
  async stop(): Promise<void> {
    const s = this.server
    this.server = undefined
    if (s === undefined) return
    s.closeAllConnections()
    await new Promise<void>((resolve) => s.close(() => resolve()))
  }

  async restart(): Promise<void> {
    await this.start(this.port)
  }
}

/**
 * An MCP server of the 2024-11-05 generation: HTTP+SSE only (the SDK's SSEServerTransport), one
 * `ping` tool. A POST to its URL (how Streamable HTTP starts) answers 405.
 */
export async function startSseOnlyServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js')
  const transports = new Map<string, InstanceType<typeof SSEServerTransport>>()
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res)
      transports.set(transport.sessionId, transport)
      res.on('close', () => transports.delete(transport.sessionId))
      const mcp = new McpServer({ name: 'fixture-sse', version: '1.0.0' })
      mcp.registerTool('ping', { description: 'Answers pong' }, async () => ({
        content: [{ type: 'text', text: 'pong over sse' }]
      }))
      void mcp.connect(transport)
      return
    }
    const transport = transports.get(url.searchParams.get('sessionId') ?? '')
    if (req.method === 'POST' && url.pathname === '/messages' && transport !== undefined) {
      void transport.handlePostMessage(req, res)
      return
    }
    res.writeHead(405).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/sse`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * A hand-written MCP server (JSON answers, no SDK: an SDK server checks its own results) whose tools
 * answer what an SDK server never would: `broken` a text block without text, `typed` structured
 * content that does not match its output schema, `refuse` a JSON-RPC error; `plain` a good result.
 */
export async function startRawServer(): Promise<{
  url: string
  initializes: () => number
  close: () => Promise<void>
}> {
  let initializes = 0
  const tools = [
    { name: 'broken', inputSchema: { type: 'object' } },
    {
      name: 'typed',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }
    },
    { name: 'refuse', inputSchema: { type: 'object' } },
    { name: 'plain', inputSchema: { type: 'object' } }
  ]
  const answer = (method: string, params: Record<string, any> | undefined): Record<string, unknown> => {
    if (method === 'initialize') {
      initializes++
      return {
        result: {
          protocolVersion: params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'raw', version: '1' }
        }
      }
    }
    if (method === 'tools/list') return { result: { tools } }
    if (method !== 'tools/call') return { result: {} }
    switch (params?.name) {
      case 'broken':
        return { result: { content: [{ type: 'text' }] } }
      case 'typed':
        return { result: { content: [{ type: 'text', text: 'n' }], structuredContent: { n: 'not a number' } } }
      case 'refuse':
        return { error: { code: -32602, message: 'no such thing here' } }
      default:
        return { result: { content: [{ type: 'text', text: 'plain answer' }] } }
    }
  }
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end()
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number
        method: string
        params?: Record<string, any>
      }
      if (msg.id === undefined) {
        res.writeHead(202).end()
        return
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...answer(msg.method, msg.params) }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    initializes: () => initializes,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
