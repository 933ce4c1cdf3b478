import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startMcp, openSession, readBody, ACCEPT_BOTH, addFixtures } from './helpers.js'
import { startTestPlatform } from '../helpers/platform.js'
import { mcpArea } from '../../runtime/mcp/install.js'

const post = async (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body)
  })

t.test('session dialect over POST', async (t) => {
  const m = await startMcp()
  t.teardown(m.tp.close)

  await t.test('initialize negotiates each supported version and falls back to the latest', async (t) => {
    for (const v of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      const s = await openSession(m.url, v)
      t.equal(s.init.result.protocolVersion, v)
      t.match(s.sid, /^[\x21-\x7e]+$/, 'session id is visible ASCII')
    }
    const s = await openSession(m.url, '1999-01-01')
    t.equal(s.init.result.protocolVersion, '2025-11-25')
    t.same(s.init.result.serverInfo.name, 'agent-platform')
    t.ok(s.init.result.capabilities.tools.listChanged)
    t.ok(s.init.result.capabilities.tasks, '2025-11-25 advertises the task form')
  })

  await t.test('ping, lists and calls with the session header', async (t) => {
    const s = await openSession(m.url)
    t.same((await s.call('ping')).body.result, {})
    const tools = (await s.call('tools/list')).body.result.tools
    t.ok(tools.find((x: any) => x.name === 'test_simple_text'))
    t.equal(tools.find((x: any) => x.name === 'slow_compute').execution.taskSupport, 'optional')
    t.equal(tools.find((x: any) => x.name === 'show_dashboard')._meta.ui.resourceUri, 'ui://conformance/dashboard.html')
    const r = await s.call('tools/call', { name: 'test_simple_text', arguments: {} })
    t.equal(r.res.headers.get('content-type'), 'application/json', 'no notifications → one JSON response')
    t.equal(r.body.result.content[0].text, 'This is a simple text response for testing.')
    t.equal(
      (await s.call('resources/read', { uri: 'test://template/42/data' })).body.result.contents[0].text.includes('42'),
      true
    )
    t.equal(
      (await s.call('resources/read', { uri: 'test://nope' })).body.error.code,
      -32002,
      'legacy resource-not-found code'
    )
    t.same((await s.call('resources/subscribe', { uri: 'test://watched-resource' })).body.result, {})
    t.same((await s.call('logging/setLevel', { level: 'warning' })).body.result, {})
    t.equal((await s.call('logging/setLevel', { level: 'loud' })).body.error.code, -32602)
    t.ok(
      (
        await s.call('completion/complete', {
          ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
          argument: { name: 'arg1', value: 'x' }
        })
      ).body.result.completion.values
    )
    const nf = await s.call('no/such')
    t.equal(nf.status, 200)
    t.equal(nf.body.error.code, -32601)
    t.equal((await s.call('tools/call', { name: 'nope' })).body.error.code, -32602, 'unknown tool is a protocol error')
  })

  await t.test('progress goes on an SSE response when the client accepts it', async (t) => {
    const s = await openSession(m.url)
    const r = await s.call('tools/call', {
      name: 'test_tool_with_progress',
      arguments: {},
      _meta: { progressToken: 'p1' }
    })
    t.equal(r.res.headers.get('content-type'), 'text/event-stream')
    const progress = r.events.filter((e) => e.method === 'notifications/progress')
    t.equal(progress.length, 3)
    t.same(
      progress.map((e) => e.params.progress),
      [0, 50, 100]
    )
    t.equal(r.body.id !== undefined && r.body.result.content[0].text, 'Progress reported')
    const json = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': s.sid },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p2' } }
      })
    })
    t.equal(json.headers.get('content-type'), 'application/json', 'JSON-only client gets JSON, notifications dropped')
  })

  await t.test('sampling/elicitation become server requests on the POST stream', async (t) => {
    const s = await openSession(m.url, '2025-11-25', { elicitation: {} })
    const res = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-session-id': s.sid },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'e1',
        method: 'tools/call',
        params: { name: 'test_elicitation', arguments: { message: 'Your name?' } }
      })
    })
    const reader = res.body!.getReader()
    let buf = ''
    let request: any
    while (request === undefined) {
      const { value } = await reader.read()
      buf += new TextDecoder().decode(value)
      const line = buf.split('\n').find((l) => l.startsWith('data: ') && l.includes('elicitation/create'))
      if (line !== undefined) request = JSON.parse(line.slice(6))
    }
    t.equal(request.method, 'elicitation/create')
    const ack = await post(
      m.url,
      { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { response: 'Ada' } } },
      { 'mcp-session-id': s.sid }
    )
    t.equal(ack.status, 202)
    while (!buf.includes('"id":"e1"')) {
      const { value, done } = await reader.read()
      if (done) break
      buf += new TextDecoder().decode(value)
    }
    t.match(buf, /User response: action=accept/)
    const noCap = await openSession(m.url)
    const r = await noCap.call('tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } })
    t.match(r.body.error.message, /sampling/, 'a capability the client did not declare is never requested')
  })

  await t.test('envelope and session errors', async (t) => {
    const s = await openSession(m.url)
    let r = await post(m.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    t.equal(r.status, 400)
    t.match(await r.json(), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: /Mcp-Session-Id/ } })
    r = await post(m.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'nope' })
    t.equal(r.status, 404)
    t.equal((await r.json()).error.code, -32001)
    r = await post(
      m.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': s.sid, 'mcp-protocol-version': '2030-01-01' }
    )
    t.equal(r.status, 400)
    t.match((await r.json()).error.message, /Unsupported protocol version/)
    r = await post(
      m.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': s.sid, 'mcp-protocol-version': '2025-06-18' }
    )
    t.equal(r.status, 400)
    t.match((await r.json()).error.message, /MCP-Protocol-Version mismatch: session=2025-11-25, header=2025-06-18/)
    r = await post(m.url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-session-id': s.sid })
    t.equal(r.status, 400)
    t.match(await r.json(), { id: null, error: { code: -32600, message: /batching is not supported/ } })
    r = await post(m.url, '{"jsonrpc":"2.0",', { 'mcp-session-id': s.sid })
    t.equal(r.status, 400)
    t.equal((await r.json()).error.code, -32700)
    r = await post(m.url, '', { 'mcp-session-id': s.sid })
    t.equal((await r.json()).error.code, -32700)
    r = await post(m.url, { jsonrpc: '2.0', method: 'notifications/progress', params: {} }, { 'mcp-session-id': s.sid })
    t.equal(r.status, 202, 'notifications get 202')
    t.equal(await r.text(), '')
    r = await post(m.url, { jsonrpc: '1.0', id: 1, method: 'ping' }, { 'mcp-session-id': s.sid })
    t.equal((await r.json()).error.code, -32600)
    r = await post(m.url, { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, { 'mcp-session-id': s.sid })
    t.equal((await r.json()).error.code, -32600)
    r = await post(m.url, { jsonrpc: '2.0', id: 1 }, { 'mcp-session-id': s.sid })
    t.match(await r.json(), { error: { code: -32600, message: 'Missing method' } })
    r = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'mcp-session-id': s.sid },
      body: '{}'
    })
    t.equal(r.status, 415)
    r = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/html', 'mcp-session-id': s.sid },
      body: '{}'
    })
    t.equal(r.status, 406)
    r = await fetch(m.url, { method: 'PUT', body: '{}' })
    t.equal(r.status, 405)
    t.equal(r.headers.get('allow'), 'GET, POST, DELETE, OPTIONS')
    t.equal((await r.json()).error.code, -32000)
  })

  await t.test('DELETE ends a session; later requests get 404', async (t) => {
    const s = await openSession(m.url)
    let r = await fetch(m.url, { method: 'DELETE', headers: { 'mcp-session-id': s.sid } })
    t.equal(r.status, 204)
    t.equal((await s.call('ping')).status, 404)
    r = await fetch(m.url, { method: 'DELETE', headers: { 'mcp-session-id': s.sid } })
    t.equal(r.status, 404)
    r = await fetch(m.url, { method: 'DELETE' })
    t.equal(r.status, 400)
  })

  await t.test('GET opens the notification stream; plugin changes send list_changed', async (t) => {
    const s = await openSession(m.url)
    await s.call('resources/subscribe', { uri: 'test://watched-resource' })
    let r = await fetch(m.url)
    t.equal(r.status, 405, 'GET without a session: 405')
    await r.text()
    const ac = new AbortController()
    r = await fetch(m.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid }, signal: ac.signal })
    t.equal(r.status, 200)
    t.equal(r.headers.get('mcp-session-id'), s.sid)
    const second = await fetch(m.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid } })
    t.equal(second.status, 409)
    await second.text()
    const reader = r.body!.getReader()
    const off = m.mcp.registerTool({ name: 'late_tool', description: 'registered late', handler: () => 'late' })
    let buf = ''
    while (!buf.includes('tools/list_changed') || !buf.includes('resources/updated'))
      buf += new TextDecoder().decode((await reader.read()).value)
    t.match(buf, /notifications\/prompts\/list_changed/)
    t.match(buf, /"uri":"test:\/\/watched-resource"/)
    t.ok((await s.call('tools/list')).body.result.tools.find((x: any) => x.name === 'late_tool'))
    off()
    await fetch(m.url, { method: 'DELETE', headers: { 'mcp-session-id': s.sid } })
    let done = false
    while (!done) done = (await reader.read()).done
    t.pass("DELETE ends the session's GET stream")
    ac.abort()
  })

  await t.test(
    '2025-11-25 task form: params.task → task handle, tasks/get, tasks/result, tasks/list, tasks/cancel',
    async (t) => {
      const s = await openSession(m.url)
      const created = (
        await s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 0.2 }, task: { ttl: 60_000 } })
      ).body.result.task
      t.match(created, { status: 'working', ttl: 60_000, pollInterval: 1000 })
      t.equal((await s.call('tasks/get', { taskId: created.taskId })).body.result.taskId, created.taskId)
      const result = (await s.call('tasks/result', { taskId: created.taskId })).body.result
      t.match(result.content[0].text, /Computed/)
      t.equal(result._meta['io.modelcontextprotocol/related-task'].taskId, created.taskId)
      t.ok((await s.call('tasks/list')).body.result.tasks.find((x: any) => x.taskId === created.taskId))
      const long = (await s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} })).body
        .result.task
      t.equal((await s.call('tasks/cancel', { taskId: long.taskId })).body.result.status, 'cancelled')
      t.match((await s.call('tasks/cancel', { taskId: long.taskId })).body.error.message, /terminal status 'cancelled'/)
      t.equal(
        (await s.call('tasks/get', { taskId: 'task-none' })).body.error.message,
        'Failed to retrieve task: Task not found'
      )
      t.equal(
        (await s.call('tools/call', { name: 'test_simple_text', task: {} })).body.error.code,
        -32601,
        'forbidden tools refuse the task form'
      )
    }
  )
})

t.test(
  'session cap: initialize beyond max-sessions gets 503 when no idle anonymous session can make room',
  async (t) => {
    const m = await startMcp({ 'platform.mcp.max-sessions': 2 }, { fixtures: false })
    t.teardown(m.tp.close)
    const ac = new AbortController()
    t.teardown(() => {
      ac.abort()
    })
    // an open notification stream keeps a session busy, so it is not evicted for the newcomer
    for (const s of [await openSession(m.url), await openSession(m.url)]) {
      t.equal(
        (await fetch(m.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid }, signal: ac.signal }))
          .status,
        200
      )
    }
    const r = await post(m.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }
    })
    t.equal(r.status, 503)
    t.match(await r.json(), { error: { code: -32000, message: 'Too many sessions' } })
  }
)

t.test('sessions live in LMDB: a restarted server keeps them', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-restart-'))
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true })
  })
  const start = async (): Promise<{ url: string; close: () => Promise<void> }> => {
    const tp = await startTestPlatform(
      { 'platform.data-dir': dataDir },
      {
        install: async (p) => {
          await p.use(mcpArea)
          await addFixtures(p)
        }
      }
    )
    return { url: `${tp.url}/platform/mcp`, close: tp.close }
  }
  const a = await start()
  const s = await openSession(a.url, '2025-06-18')
  await a.close()
  const b = await start()
  t.teardown(b.close)
  const r = await fetch(b.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'mcp-session-id': s.sid, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  })
  t.equal(r.status, 200)
  t.ok((await readBody(r)).body.result.tools.length > 0)
})

t.test('idle sessions expire after the TTL', async (t) => {
  const m = await startMcp({ 'platform.mcp.session-ttl-minutes': 1 }, { fixtures: false })
  t.teardown(m.tp.close)
  const s = await openSession(m.url)
  const rec = m.mcp.core.sessions.get(s.sid)!
  rec.record.lastSeen -= 61_000
  t.equal((await s.call('ping')).status, 404)
})
