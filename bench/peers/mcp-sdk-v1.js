// Peer: the official MCP TypeScript SDK v1 (@modelcontextprotocol/sdk) on node:http with one `add`
// tool. `session` (default): the SDK's fastest configuration, one McpServer + transport created at
// initialize and reused for every request of that session, JSON responses (no SSE).
// `stateless`: the SDK's stateless pattern, a new McpServer + transport per request.
import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'

const mode = process.argv[2] ?? 'session'

function newServer() {
  const server = new McpServer({ name: 'bench-peer', version: '1.0.0' })
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
  )
  return server
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      try {
        resolve(chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString()))
      } catch (e) {
        reject(e)
      }
    })
    req.on('error', reject)
  })
}

const sessions = new Map()

const http = createServer(async (req, res) => {
  try {
    if (req.method !== 'POST') {
      res.writeHead(405).end()
      return
    }
    const body = await readJson(req)
    if (mode === 'stateless') {
      const server = newServer()
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      res.on('close', () => {
        transport.close()
        server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(req, res, body)
      return
    }
    const sid = req.headers['mcp-session-id']
    let transport = sid !== undefined ? sessions.get(sid) : undefined
    if (transport === undefined) {
      if (!isInitializeRequest(body)) {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"No valid session"},"id":null}')
        return
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          sessions.set(id, transport)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId)
      }
      await newServer().connect(transport)
    }
    await transport.handleRequest(req, res, body)
  } catch (err) {
    if (!res.headersSent) res.writeHead(500).end(String(err))
  }
})
http.keepAliveTimeout = 60_000
http.listen(0, '127.0.0.1', () => {
  console.log(`mcp-sdk-v1 (${mode}) listening on http://127.0.0.1:${http.address().port}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
