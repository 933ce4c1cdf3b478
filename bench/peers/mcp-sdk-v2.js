// Peer: the official MCP TypeScript SDK v2 (@modelcontextprotocol/server) `createMcpHandler` with
// one `add` tool, served on node:http (request → web Request, Response → node response, as the
// SDK's node adapter does). It answers the stateless 2026-07-28 dialect and, through its legacy
// fallback, 2025-era requests.
import { createServer } from 'node:http'
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server'
import { z } from 'zod'

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'bench-peer', version: '1.0.0' })
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
  )
  return server
})

const http = createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', async () => {
    try {
      const headers = new Headers()
      for (const [k, v] of Object.entries(req.headers))
        if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v)
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks)
      })
      const response = await handler.fetch(request)
      const out = {}
      response.headers.forEach((v, k) => {
        out[k] = v
      })
      res.writeHead(response.status, out)
      res.end(Buffer.from(await response.arrayBuffer()))
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err))
    }
  })
})
http.keepAliveTimeout = 60_000
http.listen(0, '127.0.0.1', () => {
  console.log(`mcp-sdk-v2 listening on http://127.0.0.1:${http.address().port}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
