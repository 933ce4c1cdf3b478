import t from 'tap'
import WebSocket from 'ws'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { startMcp, MODERN } from './helpers.js'

t.test('official SDK clients', async (t) => {
  const m = await startMcp({}, { agents: true })
  t.teardown(m.tp.close)

  await t.test('SDK 1.x over Streamable HTTP with a session: /platform/mcp', async (t) => {
    const client = new ClientV1({ name: 'v1', version: '1.0.0' }, { capabilities: { elicitation: {} } })
    const transport = new TransportV1(new URL(m.url))
    await client.connect(transport)
    t.ok(transport.sessionId, 'session id issued')
    t.equal(client.getServerVersion()?.name, 'agent-platform')
    const tools = await client.listTools()
    t.ok(tools.tools.some((x) => x.name === 'greet'))
    const r = await client.callTool({ name: 'greet', arguments: { name: 'SDK' } })
    t.same(r.content, [{ type: 'text', text: 'Hello, SDK!' }])
    client.setRequestHandler((await import('@modelcontextprotocol/sdk/types.js')).ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { response: 'yes' }
    }))
    const e = await client.callTool({ name: 'test_elicitation', arguments: { message: 'ok?' } })
    t.match((e.content as any)[0].text, /action=accept/)
    const bad = await client.callTool({ name: 'greet', arguments: {} })
    t.equal(bad.isError, true, 'invalid arguments are a tool error (SEP-1303)')
    const res = await client.readResource({ uri: 'test://static-text' })
    t.equal((res.contents[0] as any).text, 'This is the content of the static text resource.')
    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } })
    t.match(JSON.stringify(prompt.messages), /arg1='a'/)
    await transport.terminateSession()
    await client.close()
  })

  await t.test('SDK 1.x against an agent endpoint and a custom /mcp endpoint', async (t) => {
    for (const [path, tool, args, text] of [
      ['/platform/agent/helper/mcp', 'add', { a: 2, b: 40 }, '42'],
      ['/custom/mcp', 'hello', {}, 'hello from custom']
    ] as const) {
      const client = new ClientV1({ name: 'v1', version: '1.0.0' })
      await client.connect(new TransportV1(new URL(m.base + path)))
      const tools = await client.listTools()
      t.same(
        tools.tools.map((x) => x.name),
        [tool],
        `${path} serves only its agent's tools`
      )
      const r = await client.callTool({ name: tool, arguments: args })
      t.equal((r.content as any)[0].text, text)
      await client.close()
    }
    const r = await fetch(m.base + '/platform/agent/custom/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}'
    })
    t.equal(r.status, 404, 'an agent with its own /mcp endpoint is not on the default path')
    const none = await fetch(m.base + '/platform/agent/nobody/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}'
    })
    t.equal(none.status, 404)
  })

  await t.test('SDK 2.x negotiates the stateless 2026-07-28 dialect (auto mode)', async (t) => {
    const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } })
    await client.connect(new TransportV2(new URL(m.url)))
    t.equal(client.getNegotiatedProtocolVersion(), MODERN)
    const tools = await client.listTools()
    t.ok(tools.tools.some((x) => x.name === 'test_simple_text'))
    const r = await client.callTool({ name: 'greet', arguments: { name: 'v2' } })
    t.same(r.content, [{ type: 'text', text: 'Hello, v2!' }])
    const res = await client.readResource({ uri: 'test://template/7/data' })
    t.match((res.contents[0] as any).text, /7/)
    await client.close()
  })

  await t.test('SDK 2.x in legacy mode still gets a session', async (t) => {
    const client = new ClientV2({ name: 'v2', version: '2.0.0' })
    await client.connect(new TransportV2(new URL(m.url)))
    t.equal(client.getNegotiatedProtocolVersion(), '2025-11-25')
    t.ok((await client.listTools()).tools.length > 0)
    await client.close()
  })

  await t.test('WebSocket: JSON-RPC frames, both dialects, responses matched by id', async (t) => {
    const ws = new WebSocket(m.url.replace('http', 'ws'))
    await new Promise((resolve, reject) => {
      ws.once('open', resolve)
      ws.once('error', reject)
    })
    const replies = new Map<unknown, any>()
    const waiters = new Map<unknown, (v: any) => void>()
    const notes: any[] = []
    ws.on('message', (d) => {
      const msg = JSON.parse(String(d))
      if (msg.id !== undefined && msg.method === undefined) {
        replies.set(msg.id, msg)
        waiters.get(msg.id)?.(msg)
      } else notes.push(msg)
    })
    const rpc = async (msg: Record<string, unknown>): Promise<any> =>
      await new Promise((resolve) => {
        waiters.set(msg.id, resolve)
        ws.send(JSON.stringify({ jsonrpc: '2.0', ...msg }))
      })
    const disc = await rpc({
      id: 'd',
      method: 'server/discover',
      params: {
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
      }
    })
    t.equal(disc.result.resultType, 'complete', 'stateless over WS (no headers to check)')
    const init = await rpc({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ws', version: '1' } }
    })
    t.equal(init.result.protocolVersion, '2025-06-18')
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    const [a, b] = await Promise.all([
      rpc({ id: 2, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.1 } } }),
      rpc({ id: 3, method: 'tools/call', params: { name: 'greet', arguments: { name: 'ws' } } })
    ])
    t.match(a.result.content[0].text, /Computed/)
    t.equal(b.result.content[0].text, 'Hello, ws!')
    const p = await rpc({
      id: 4,
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'w' } }
    })
    t.ok(p.result)
    t.equal(notes.filter((n) => n.method === 'notifications/progress').length, 3, 'progress on the socket')
    ws.send('{oops')
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.equal(replies.get(null)?.error?.code, -32700, 'parse error answered on the socket with id null')
    const off = m.mcp.registerTool({ name: 'ws_late', description: 'late', handler: () => 1 })
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.ok(
      notes.find((n) => n.method === 'notifications/tools/list_changed'),
      'list_changed on the socket of a session'
    )
    off()
    ws.close()
  })

  await t.test('WebSocket: a foreign Origin is refused', async (t) => {
    const ws = new WebSocket(m.url.replace('http', 'ws'), { headers: { origin: 'http://evil.example.com' } })
    const status = await new Promise((resolve) => {
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode)
      })
      ws.once('open', () => {
        resolve(101)
      })
    })
    t.equal(status, 403)
  })
})
