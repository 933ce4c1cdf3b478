// The fetch the gateway gives the SDK client: a server that answers a POST as an event stream (the
// SDK server's default) and one that answers JSON, over kept-alive connections; an abort.
import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { z } from 'zod'
import { KeepAliveFetch } from '../../runtime/mcp/keep-alive-fetch.js'

const sockets = new Set<unknown>()
let requests = 0
let json = false
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  sockets.add(req.socket)
  requests++
  void (async () => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const mcp = new McpServer({ name: 'fixture-add', version: '1.0.0' })
    mcp.registerTool('add', { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }]
    }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json })
    res.on('close', () => {
      void transport.close()
      void mcp.close()
    })
    await mcp.connect(transport)
    await transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text))
  })().catch(() => res.destroy())
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  server.closeAllConnections()
  server.close()
})
const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`)

for (const answer of ['an event stream', 'JSON'] as const) {
  t.test(`a server answering with ${answer}: calls on one kept-alive connection`, async (t) => {
    json = answer === 'JSON'
    sockets.clear()
    requests = 0
    const http = new KeepAliveFetch()
    const client = new Client({ name: 'test', version: '1' })
    t.teardown(async () => {
      await client.close()
      http.close()
    })
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: http.fetch }))
    for (const [a, b] of [
      [1, 2],
      [20, 22]
    ] as const)
      t.same(await client.callTool({ name: 'add', arguments: { a, b } }), {
        content: [{ type: 'text', text: `${a + b}` }]
      })
    // the client's event-stream GET holds a connection of its own; the POSTs share theirs
    t.ok(sockets.size < requests - 1, `${requests} requests on ${sockets.size} connections`)
  })
}

t.test('an aborted request rejects with the signal’s reason and sends nothing', async (t) => {
  const http = new KeepAliveFetch()
  t.teardown(() => http.close())
  sockets.clear()
  const ctl = new AbortController()
  ctl.abort(new Error('gone'))
  await t.rejects(http.fetch(url, { method: 'POST', body: '{}', signal: ctl.signal }), { message: 'gone' })
  t.equal(sockets.size, 0)
  const late = new AbortController()
  const pending = http.fetch(url, { method: 'GET', headers: { accept: 'text/event-stream' }, signal: late.signal })
  late.abort()
  await t.rejects(pending, { name: 'AbortError' })
})
