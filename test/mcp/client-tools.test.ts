import t from 'tap'
import { startExtras, wsClient } from './extras-helpers.js'
import { openSession, ACCEPT_BOTH } from './helpers.js'
import { getClientTools } from '../../runtime/mcp/client-tools.js'

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } }

/** Reads the events of a GET notification stream and hands each JSON message to `on`. */
async function readStream(res: Response, on: (m: any) => void): Promise<void> {
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let buf = ''
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
    if (done) return
    buf += dec.decode(value, { stream: true })
    let i
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i)
      buf = buf.slice(i + 2)
      for (const l of block.split('\n')) if (l.startsWith('data: ')) on(JSON.parse(l.slice(6)))
    }
  }
}

t.test('server-to-client tool calls', async (t) => {
  const m = await startExtras({ 'platform.mcp.client-tools.response-route': true })
  t.teardown(m.tp.close)
  const bridge = getClientTools(m.tp.platform)!
  t.equal(bridge.timeoutMs, 30_000, 'default timeout 30 s')
  // a server tool that turns around and calls a tool on the client that called it
  m.mcp.registerTool({
    name: 'ask_client',
    description: 'Calls the client',
    params: [{ name: 'tool' }, { name: 'text' }],
    handler: async (a, ctx) => {
      try {
        return { answer: await bridge.callClientTool(ctx.sessionId!, a.tool as string, { text: a.text }) }
      } catch (err) {
        return { failed: (err as { code?: string }).code, message: (err as Error).message }
      }
    }
  })

  await t.test('over WebSocket: the request carries a UUID id; result, error and isError answers', async (t) => {
    const seen: any[] = []
    const c = await wsClient(m.url, {}, (msg, ws) => {
      if (msg.method !== 'tools/call') return
      seen.push(msg)
      const { name, arguments: args } = msg.params
      if (name === 'echo')
        ws.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: msg.id,
            result: { content: [{ type: 'text', text: `echo ${String(args.text)}` }] }
          })
        )
      else if (name === 'broken')
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: 'client exploded' } }))
      else
        ws.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: msg.id,
            result: { content: [{ type: 'text', text: 'soft failure' }], isError: true }
          })
        )
    })
    t.teardown(() => c.ws.close())
    await c.rpc({ id: 1, method: 'initialize', params: INIT })
    const ok = await c.rpc({
      id: 2,
      method: 'tools/call',
      params: { name: 'ask_client', arguments: { tool: 'echo', text: 'hi' } }
    })
    t.same(ok.result.structuredContent, { answer: { content: [{ type: 'text', text: 'echo hi' }] } })
    t.match(seen[0].id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'correlated by a UUID')
    t.same(seen[0].params, { name: 'echo', arguments: { text: 'hi' } })
    const err = await c.rpc({
      id: 3,
      method: 'tools/call',
      params: { name: 'ask_client', arguments: { tool: 'broken', text: 'x' } }
    })
    t.same(err.result.structuredContent, { failed: 'PLT_ERR_MCP_CLIENT_TOOL_FAILED', message: 'client exploded' })
    const soft = await c.rpc({
      id: 4,
      method: 'tools/call',
      params: { name: 'ask_client', arguments: { tool: 'soft', text: 'x' } }
    })
    t.same(soft.result.structuredContent, { failed: 'PLT_ERR_MCP_CLIENT_TOOL_FAILED', message: 'soft failure' })
    t.equal(bridge.inFlight, 0)
  })

  await t.test('over the GET stream, answered by a POST with Mcp-Session-Id or to /_mcp/tool-response', async (t) => {
    const s = await openSession(m.url)
    const ac = new AbortController()
    t.teardown(() => ac.abort())
    const stream = await fetch(m.url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid },
      signal: ac.signal
    })
    t.equal(stream.status, 200)
    let useRoute = false
    const answered: number[] = []
    void readStream(stream, (msg) => {
      if (msg.method !== 'tools/call') return
      const reply = { jsonrpc: '2.0', id: msg.id, result: { value: msg.params.arguments.n * 2 } }
      const req = useRoute
        ? fetch(`${m.base}/_mcp/tool-response`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(reply)
          })
        : fetch(m.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: ACCEPT_BOTH,
              'mcp-session-id': s.sid,
              'mcp-protocol-version': '2025-11-25'
            },
            body: JSON.stringify(reply)
          })
      void req.then((r) => {
        answered.push(r.status)
      })
    })
    t.same(await bridge.callClientTool(s.sid, 'double', { n: 21 }), { value: 42 })
    useRoute = true
    t.same(await bridge.callClientTool(s.sid, 'double', { n: 5 }), { value: 10 })
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.same(answered, [202, 202])
  })

  await t.test('timeout, no stream, unknown session, bad answers on the route', async (t) => {
    const s = await openSession(m.url)
    await t.rejects(bridge.callClientTool(s.sid, 'x'), /no open stream/)
    await t.rejects(bridge.callClientTool('nope', 'x'), /no MCP session 'nope'/)
    const ac = new AbortController()
    t.teardown(() => ac.abort())
    await fetch(m.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid }, signal: ac.signal })
    const err = await bridge.callClientTool(s.sid, 'silent', {}, { timeoutMs: 100 }).catch((e: unknown) => e)
    t.match(err, { code: 'PLT_ERR_MCP_CLIENT_TOOL_TIMEOUT', params: { toolName: 'silent', timeoutMs: 100 } })
    t.match((err as Error).message, /did not answer within 100 ms/)
    t.equal(bridge.inFlight, 0)
    const late = await fetch(`${m.base}/_mcp/tool-response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'not-pending', result: {} })
    })
    t.equal(late.status, 404)
    const bad = await fetch(`${m.base}/_mcp/tool-response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1 })
    })
    t.equal(bad.status, 400)
  })

  await t.test('ending the session fails its pending calls', async (t) => {
    const s = await openSession(m.url)
    const ac = new AbortController()
    t.teardown(() => ac.abort())
    await fetch(m.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid }, signal: ac.signal })
    const p = bridge.callClientTool(s.sid, 'slow').catch((e: unknown) => e)
    await fetch(m.url, { method: 'DELETE', headers: { 'mcp-session-id': s.sid } })
    const e = await p
    t.match(e, { code: 'PLT_ERR_MCP_CLIENT_TOOL_FAILED', params: { toolName: 'slow' } })
    t.match((e as Error).message, /session ended/)
  })
})

t.test('the response route exists only when enabled; the timeout is configurable', async (t) => {
  const m = await startExtras({ 'platform.mcp.client-tools.timeout-ms': 1234 })
  t.teardown(m.tp.close)
  t.equal(getClientTools(m.tp.platform)!.timeoutMs, 1234)
  const r = await fetch(`${m.base}/_mcp/tool-response`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"id":"x","result":{}}'
  })
  t.equal(r.status, 404)
})
