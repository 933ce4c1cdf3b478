import t from 'tap'
import { startMcp, modern, meta, modernHeaders, readBody, MODERN } from './helpers.js'

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } }
const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

t.test('stateless 2026-07-28 dialect', async (t) => {
  const m = await startMcp()
  t.teardown(m.tp.close)

  await t.test('server/discover: versions, capabilities, extensions, caching, serverInfo', async (t) => {
    const r = await modern(m.url, 'server/discover')
    t.equal(r.status, 200)
    t.equal(r.res.headers.get('mcp-session-id'), null, 'no session is ever created')
    const res = r.body.result
    t.equal(Object.keys(res)[0], 'resultType')
    t.match(res, {
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'public',
      supportedVersions: [MODERN, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']
    })
    t.same(res.capabilities.extensions['io.modelcontextprotocol/tasks'], {})
    t.same(res.capabilities.extensions['io.modelcontextprotocol/ui'], { mimeTypes: ['text/html;profile=mcp-app'] })
    t.notOk(res.capabilities.tasks, 'no v1 tasks slot')
    t.equal(res._meta['io.modelcontextprotocol/serverInfo'].name, 'agent-platform')
  })

  await t.test('every result has resultType; cacheable ones ttlMs and cacheScope', async (t) => {
    for (const method of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
      const r = (await modern(m.url, method)).body.result
      t.match(r, { resultType: 'complete', ttlMs: 0, cacheScope: 'public' }, method)
    }
    const read = (await modern(m.url, 'resources/read', { uri: 'test://static-text' })).body.result
    t.match(read, {
      resultType: 'complete',
      ttlMs: 0,
      contents: [{ text: 'This is the content of the static text resource.' }]
    })
    const call = (await modern(m.url, 'tools/call', { name: 'test_simple_text', arguments: {} })).body.result
    t.equal(call.resultType, 'complete')
    t.notOk('ttlMs' in call, 'tools/call is not cacheable')
    const tools = (await modern(m.url, 'tools/list')).body.result.tools
    t.equal(tools[0].inputSchema.$schema, 'https://json-schema.org/draft/2020-12/schema')
    t.notOk('execution' in tools[0])
    const app = (await modern(m.url, 'resources/read', { uri: 'ui://conformance/dashboard.html' })).body.result
    t.equal(app.contents[0].mimeType, 'text/html;profile=mcp-app')
  })

  await t.test('the _meta envelope: -32602 and 400 when fields are missing', async (t) => {
    const send = async (params: unknown): Promise<{ status: number; body: any }> => {
      const res = await fetch(m.url, {
        method: 'POST',
        headers: modernHeaders('server/discover'),
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'server/discover', params })
      })
      return { status: res.status, body: await res.json() }
    }
    for (const params of [
      {},
      { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } },
      { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      { _meta: { ...meta(), 'io.modelcontextprotocol/logLevel': 'loud' } }
    ]) {
      const r = await send(params)
      t.equal(r.status, 400)
      t.match(r.body, { id: 7, error: { code: -32602 } })
    }
    const noInfo = await send({
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
    })
    t.equal(noInfo.status, 200, 'clientInfo is optional')
  })

  await t.test('versions and headers: -32022, -32020', async (t) => {
    let r = await modern(
      m.url,
      'server/discover',
      {},
      { headers: { 'mcp-protocol-version': 'v9' }, metaExtra: { 'io.modelcontextprotocol/protocolVersion': 'v9' } }
    )
    t.equal(r.status, 400)
    t.match(r.body.error, { code: -32022, data: { supported: [MODERN], requested: 'v9' } })
    r = await modern(m.url, 'server/discover', {}, { metaExtra: { 'io.modelcontextprotocol/protocolVersion': 'v9' } })
    t.equal(r.status, 400)
    t.equal(r.body.error.code, -32020, 'header and _meta disagree')
    r = await modern(m.url, 'tools/list', {}, { headers: { 'mcp-method': 'prompts/list' } })
    t.equal(r.status, 400)
    t.match(r.body.error, {
      code: -32020,
      message: "Mcp-Method header 'prompts/list' does not match body method 'tools/list'"
    })
    r = await modern(m.url, 'tools/list', {}, { headers: { 'mcp-method': 'TOOLS/LIST' } })
    t.equal(r.body.error.code, -32020, 'method values are case-sensitive')
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_simple_text', arguments: {} },
      { headers: { 'mcp-name': 'other' } }
    )
    t.match(r.body.error, {
      code: -32020,
      message: /Mcp-Name header 'other' does not match body target 'test_simple_text'/
    })
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_simple_text', arguments: {} },
      { headers: { 'mcp-name': '  test_simple_text  ' } }
    )
    t.equal(r.status, 200, 'surrounding whitespace is not part of the value')
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_simple_text', arguments: {} },
      { headers: { 'mcp-name': `=?base64?${Buffer.from('test_simple_text').toString('base64')}?=` } }
    )
    t.equal(r.status, 200, 'base64-wrapped names decode')
    const h = modernHeaders('tools/list')
    delete h['mcp-method']
    const res = await fetch(m.url, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } })
    })
    t.equal(res.status, 400)
    t.equal((await res.json()).error.code, -32020, 'missing Mcp-Method')
    // Mcp-Param-* (x-mcp-header)
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_headers', arguments: { region: 'eu' } },
      { headers: { 'mcp-param-region': 'eu' } }
    )
    t.equal(r.body.result.content[0].text, 'region=eu')
    r = await modern(m.url, 'tools/call', { name: 'test_headers', arguments: { region: 'eu' } })
    t.equal(r.body.error.code, -32020, 'param header missing')
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_headers', arguments: { region: 'eu' } },
      { headers: { 'mcp-param-region': '=?base64?ZX!!?=' } }
    )
    t.equal(r.body.error.code, -32020, 'invalid base64')
  })

  await t.test('methods: removed and unknown → 404 -32601, id preserved', async (t) => {
    for (const method of [
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'tasks/result',
      'tasks/list',
      'nope/nope'
    ]) {
      const r = await modern(m.url, method)
      t.equal(r.status, 404, method)
      t.equal(r.body.error.code, -32601)
      t.type(r.body.id, 'number')
    }
  })

  await t.test('capabilities: -32021 with requiredCapabilities as an object', async (t) => {
    let r = await modern(m.url, 'tools/call', { name: 'test_missing_capability', arguments: {} })
    t.equal(r.status, 400)
    t.same(r.body.error.data, { requiredCapabilities: { sampling: {} } })
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_input_required_result_capabilities', arguments: {} },
      { caps: { sampling: {} } }
    )
    t.same(
      Object.values(r.body.result.inputRequests).map((x: any) => x.method),
      ['sampling/createMessage'],
      'only declared capabilities are requested'
    )
    r = await modern(m.url, 'tasks/get', { taskId: 'x' })
    t.equal(r.status, 400)
    t.same(r.body.error.data, { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } })
  })

  await t.test('input-required results: rounds, signed requestState, tampering rejected', async (t) => {
    const caps = { elicitation: {} }
    const r1 = (
      await modern(m.url, 'tools/call', { name: 'test_input_required_result_multi_round', arguments: {} }, { caps })
    ).body.result
    t.equal(r1.resultType, 'input_required')
    t.ok(r1.inputRequests.step1)
    t.match(r1.requestState, /^[\w-]+\.[\w-]+$/)
    const r2 = (
      await modern(
        m.url,
        'tools/call',
        {
          name: 'test_input_required_result_multi_round',
          arguments: {},
          inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } },
          requestState: r1.requestState
        },
        { caps }
      )
    ).body.result
    t.ok(r2.inputRequests.step2)
    t.not(r2.requestState, r1.requestState)
    const r3 = (
      await modern(
        m.url,
        'tools/call',
        {
          name: 'test_input_required_result_multi_round',
          arguments: {},
          inputResponses: { step2: { action: 'accept', content: { color: 'blue' } } },
          requestState: r2.requestState
        },
        { caps }
      )
    ).body.result
    t.equal(r3.content[0].text, 'Ada likes blue', 'responses of earlier rounds travel in the signed state')
    const tampered = r1.requestState.slice(0, -2) + (r1.requestState.endsWith('AA') ? 'BB' : 'AA')
    let r = await modern(
      m.url,
      'tools/call',
      {
        name: 'test_input_required_result_multi_round',
        arguments: {},
        inputResponses: { step1: { action: 'accept', content: { name: 'Eve' } } },
        requestState: tampered
      },
      { caps }
    )
    t.match(r.body.error, { code: -32602, message: /integrity/ })
    r = await modern(
      m.url,
      'tools/call',
      {
        name: 'test_input_required_result_request_state',
        arguments: {},
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
        requestState: r1.requestState
      },
      { caps }
    )
    t.match(r.body.error.message, /another request/, 'state is bound to its tool')
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: null },
      { caps }
    )
    t.equal(r.body.error.code, -32602)
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: { user_name: 5 } },
      { caps }
    )
    t.equal(r.body.error.code, -32602)
    const prompt = (await modern(m.url, 'prompts/get', { name: 'test_input_required_result_prompt' }, { caps })).body
      .result
    t.equal(prompt.resultType, 'input_required')
  })

  await t.test('resources/read of an unknown URI: -32602 with the uri (SEP-2164)', async (t) => {
    const r = await modern(m.url, 'resources/read', { uri: 'test://missing' })
    t.equal(r.status, 200)
    t.match(r.body.error, { code: -32602, data: { uri: 'test://missing' } })
  })

  await t.test('logs reach the client only when _meta asks for a level', async (t) => {
    let r = await modern(m.url, 'tools/call', { name: 'test_logging_tool', arguments: {} })
    t.equal(r.events.filter((e) => e.method === 'notifications/message').length, 0)
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_logging_tool', arguments: {} },
      { metaExtra: { 'io.modelcontextprotocol/logLevel': 'debug' } }
    )
    t.equal(r.events.filter((e) => e.method === 'notifications/message').length, 1)
    r = await modern(
      m.url,
      'tools/call',
      { name: 'test_logging_tool', arguments: {} },
      { metaExtra: { 'io.modelcontextprotocol/logLevel': 'error' } }
    )
    t.equal(r.events.filter((e) => e.method === 'notifications/message').length, 0, 'below the level: filtered')
  })

  await t.test('tasks extension: handle, tasks/get, tasks/update, tasks/cancel', async (t) => {
    const created = (
      await modern(m.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.3 } }, { caps: TASKS })
    ).body.result
    t.match(created, { resultType: 'task', status: 'working', ttlMs: 300_000, pollIntervalMs: 1000 })
    t.notOk('ttl' in created)
    const working = (await modern(m.url, 'tasks/get', { taskId: created.taskId }, { caps: TASKS })).body.result
    t.match(working, { resultType: 'complete', taskId: created.taskId, status: 'working' })
    let done
    for (let i = 0; i < 50; i++) {
      done = (await modern(m.url, 'tasks/get', { taskId: created.taskId }, { caps: TASKS })).body.result
      if (done.status === 'completed') break
      await sleep(50)
    }
    t.match(done.result.content[0].text, /Computed/)
    const sync = (
      await modern(m.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, { caps: TASKS })
    ).body.result
    t.equal(sync.resultType, 'complete', 'settled inside the sync window: answered directly')
    const noExt = (await modern(m.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 } })).body.result
    t.equal(noExt.resultType, 'complete', 'without the extension an optional task runs synchronously')
    const req = await modern(m.url, 'tools/call', { name: 'failing_job', arguments: {} })
    t.equal(req.body.error.code, -32021, 'required task without the extension')
    const ask = (
      await modern(
        m.url,
        'tools/call',
        { name: 'confirm_delete', arguments: { filename: 'a.txt' } },
        { caps: { ...TASKS, elicitation: {} } }
      )
    ).body.result
    let waiting
    for (let i = 0; i < 50; i++) {
      waiting = (await modern(m.url, 'tasks/get', { taskId: ask.taskId }, { caps: TASKS })).body.result
      if (waiting.status === 'input_required') break
      await sleep(50)
    }
    t.ok(waiting.inputRequests.confirm)
    t.same(
      (
        await modern(
          m.url,
          'tasks/update',
          { taskId: ask.taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
          { caps: TASKS }
        )
      ).body.result,
      {
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'agent-platform', version: '0.1.0' } }
      }
    )
    for (let i = 0; i < 50; i++) {
      waiting = (await modern(m.url, 'tasks/get', { taskId: ask.taskId }, { caps: TASKS })).body.result
      if (waiting.status === 'completed') break
      await sleep(50)
    }
    t.equal(waiting.result.content[0].text, 'Deleted a.txt')
    const long = (
      await modern(m.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } }, { caps: TASKS })
    ).body.result
    t.equal(
      (await modern(m.url, 'tasks/cancel', { taskId: long.taskId }, { caps: TASKS })).body.result.resultType,
      'complete'
    )
    t.equal(
      (await modern(m.url, 'tasks/get', { taskId: long.taskId }, { caps: TASKS })).body.result.status,
      'cancelled'
    )
    t.equal((await modern(m.url, 'tasks/get', { taskId: 'task-unknown' }, { caps: TASKS })).body.error.code, -32602)
  })

  await t.test('subscriptions/listen: ack first, tagged notifications, filter honoured', async (t) => {
    const ac = new AbortController()
    const res = await fetch(m.url, {
      method: 'POST',
      signal: ac.signal,
      headers: modernHeaders('subscriptions/listen'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'sub-1',
        method: 'subscriptions/listen',
        params: { _meta: meta(), notifications: { toolsListChanged: true } }
      })
    })
    const reader = res.body!.getReader()
    let buf = ''
    while (!buf.includes('acknowledged')) buf += new TextDecoder().decode((await reader.read()).value)
    const off = m.mcp.registerPrompt({ name: 'p_late', description: 'late prompt', handler: () => 'x' })
    const offTool = m.mcp.registerTool({ name: 't_late', description: 'late tool', handler: () => 'x' })
    while (!buf.includes('tools/list_changed')) buf += new TextDecoder().decode((await reader.read()).value)
    const frames = buf
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
    t.equal(frames[0].method, 'notifications/subscriptions/acknowledged')
    t.ok(frames.every((f) => f.params._meta['io.modelcontextprotocol/subscriptionId'] === 'sub-1'))
    t.notOk(
      frames.some((f) => f.method === 'notifications/prompts/list_changed'),
      'not subscribed to prompts'
    )
    off()
    offTool()
    ac.abort()
    const json = await fetch(m.url, {
      method: 'POST',
      headers: { ...modernHeaders('subscriptions/listen'), accept: 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'subscriptions/listen',
        params: { _meta: meta(), notifications: {} }
      })
    })
    t.equal((await readBody(json)).body.error.code, -32600, 'listen needs a stream')
  })

  await t.test('GET and DELETE without a session: 405 and 400', async (t) => {
    const g = await fetch(m.url, { headers: { accept: 'text/event-stream' } })
    t.equal(g.status, 405)
    await g.text()
  })
})

t.test('a task asking for input the client cannot give fails with -32021', async (t) => {
  const m = await startMcp()
  t.teardown(m.tp.close)
  const created = (
    await modern(m.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x' } }, { caps: TASKS })
  ).body.result
  t.equal(created.resultType, 'task')
  let task
  for (let i = 0; i < 50; i++) {
    task = (await modern(m.url, 'tasks/get', { taskId: created.taskId }, { caps: TASKS })).body.result
    if (task.status !== 'working') break
    await sleep(50)
  }
  t.equal(task.status, 'failed')
  t.same(task.error.data, { requiredCapabilities: { elicitation: {} } })
})
