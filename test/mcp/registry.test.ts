import t from 'tap'
import { startMcp, modern, openSession, ACCEPT_BOTH } from './helpers.js'
import { ADMIT_ALL_TOOL_CALLS, type ToolCallGate, type ToolCallRequest } from '../../runtime/contracts/index.js'
import { MCP_BEFORE_DISPATCH, MCP_INVOCATION_WRAPPER } from '../../runtime/mcp/key.js'

t.test('programmatic registry beside plugins, validation, results, gate', async (t) => {
  // the gate governance would add, swapped per subtest
  let gate: ToolCallGate = ADMIT_ALL_TOOL_CALLS
  const m = await startMcp({ 'platform.mcp.body-limit-bytes': 4096 }, { gate: (req) => gate(req) })
  t.teardown(m.tp.close)
  const calls: string[] = []

  m.mcp.registerTool(
    'sum',
    'Adds numbers',
    [
      { name: 'a', type: 'integer', description: 'first' },
      { name: 'b', type: 'integer', required: false },
      { name: 'cfg', type: 'config' },
      { name: 'log', type: 'logger' }
    ],
    (args) => {
      calls.push('sum')
      return {
        total: (args.a as number) + ((args.b as number | undefined) ?? 0),
        hasConfig: typeof (args.cfg as { get: unknown }).get === 'function',
        hasLogger: typeof (args.log as { info: unknown }).info === 'function'
      }
    }
  )
  m.mcp.registerTool({
    name: 'announce',
    description: 'Broadcasts to a topic',
    params: [{ name: 'topic' }, { name: 'b', type: 'broadcaster' }],
    handler: (args) => {
      ;(args.b as { broadcast: (m: unknown) => void }).broadcast('hi')
      return (args.b as { id: string }).id
    }
  })
  m.mcp.registerTool({ name: 'list_any', description: 'Returns an array', handler: () => [1, 2, 3] })
  m.mcp.registerTool({
    name: 'boom',
    description: 'Throws',
    handler: () => {
      throw new Error('kaboom')
    }
  })
  m.mcp.registerResource('mem://note', 'note', 'A note', 'text/plain', () => 'remember')
  m.mcp.registerPrompt('hello', 'Says hello', [{ name: 'who' }], (args) => [
    { role: 'user', content: { type: 'text', text: `hello ${args.who}` } }
  ])

  await t.test('both kinds coexist; schemas are 2020-12; injectables never reach the schema', async (t) => {
    const tools = (await modern(m.url, 'tools/list')).body.result.tools
    t.ok(
      tools.find((x: any) => x.name === 'test_simple_text'),
      'plugin tool'
    )
    const sum = tools.find((x: any) => x.name === 'sum')
    t.same(sum.inputSchema, {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'integer', description: 'first' }, b: { type: 'integer' } },
      required: ['a']
    })
    t.same(Object.keys(tools.find((x: any) => x.name === 'announce').inputSchema.properties), ['topic'])
    t.ok((await modern(m.url, 'resources/list')).body.result.resources.find((r: any) => r.uri === 'mem://note'))
    t.ok((await modern(m.url, 'prompts/list')).body.result.prompts.find((p: any) => p.name === 'hello'))
    t.equal(
      (await modern(m.url, 'prompts/get', { name: 'hello', arguments: { who: 'you' } })).body.result.messages[0].content
        .text,
      'hello you'
    )
    t.equal(
      (await modern(m.url, 'prompts/get', { name: 'hello', arguments: {} })).body.error.message,
      'Missing required argument: who'
    )
  })

  await t.test('arguments are validated before the tool runs; results of any JSON type', async (t) => {
    calls.length = 0
    let r = (await modern(m.url, 'tools/call', { name: 'sum', arguments: { a: 'x' } })).body.result
    t.equal(r.isError, true)
    t.match(r.content[0].text, /arguments\.a must be integer/)
    r = (await modern(m.url, 'tools/call', { name: 'sum', arguments: {} })).body.result
    t.equal(r.content[0].text, 'Missing required parameter: a')
    t.same(calls, [], 'an invalid call never runs')
    r = (await modern(m.url, 'tools/call', { name: 'sum', arguments: { a: 2, b: 3 } })).body.result
    t.same(r.structuredContent, { total: 5, hasConfig: true, hasLogger: true })
    t.same(JSON.parse(r.content[0].text), r.structuredContent)
    r = (await modern(m.url, 'tools/call', { name: 'list_any', arguments: {} })).body.result
    t.same(r.structuredContent, [1, 2, 3], '2026-07-28: structuredContent may be any JSON')
    r = (await modern(m.url, 'tools/call', { name: 'boom', arguments: {} })).body.result
    t.same(r, { resultType: 'complete', content: [{ type: 'text', text: 'kaboom' }], isError: true, _meta: r._meta })
    r = (await modern(m.url, 'tools/call', { name: 'announce', arguments: { topic: 'news' } })).body.result
    t.equal(r.content[0].text, 'news', 'broadcaster looked up by the topic argument')
    const s = await openSession(m.url, '2025-06-18')
    t.equal(
      (await s.call('tools/call', { name: 'sum', arguments: {} })).body.error.code,
      -32602,
      'before 2025-11-25 invalid arguments are a protocol error'
    )
    t.same((await s.call('tools/call', { name: 'list_any', arguments: {} })).body.result.structuredContent, {
      result: [1, 2, 3]
    })
  })

  await t.test('the governance gate runs before every tools/call, long-running ones included', async (t) => {
    const seen: ToolCallRequest[] = []
    gate = async (req) => {
      seen.push(req)
      return req.toolName === 'sum' || req.toolName === 'slow_compute'
        ? { admitted: false, policy: 'no-math', reason: 'math is off today' }
        : { admitted: true }
    }
    t.teardown(() => {
      gate = ADMIT_ALL_TOOL_CALLS
    })
    calls.length = 0
    let r = await modern(m.url, 'tools/call', { name: 'sum', arguments: { a: 1 } })
    t.same(r.body.error, { code: -32600, message: "Tool 'sum' denied by policy 'no-math': math is off today" })
    t.same(calls, [], 'a denied tool never runs')
    r = await modern(
      m.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 5 } },
      { caps: { extensions: { 'io.modelcontextprotocol/tasks': {} } } }
    )
    t.equal(r.body.error.code, -32600, 'no task is created for a denied long-running call')
    const s = await openSession(m.url)
    r = await s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 5 }, task: {} })
    t.equal(r.body.error.code, -32600, 'session task form is gated too')
    r = await s.call('tools/call', { name: 'greet', arguments: { name: 'x' } })
    t.equal(r.body.result.content[0].text, 'Hello, x!')
    const last = seen[seen.length - 1]!
    t.match(last, { toolName: 'greet', args: { name: 'x' }, sessionId: s.sid, principal: null })
    gate = () => {
      throw new Error('policy plane down')
    }
    r = await s.call('tools/call', { name: 'greet', arguments: { name: 'x' } })
    t.equal(r.body.error.code, -32600, 'a broken gate fails closed')
  })

  await t.test('agent id reaches the gate on agent endpoints', async (t) => {
    const seen: ToolCallRequest[] = []
    gate = (req) => {
      seen.push(req)
      return { admitted: true }
    }
    t.teardown(() => {
      gate = ADMIT_ALL_TOOL_CALLS
    })
    m.mcp.registerTool({ name: 'agent_tool', description: 'agent scoped', agent: 'ghost', handler: () => 'x' })
    t.notOk(
      (await modern(m.url, 'tools/list')).body.result.tools.find((x: any) => x.name === 'agent_tool'),
      'agent tools stay off /platform/mcp'
    )
  })

  await t.test('transport guards: origin 403, body limit 413', async (t) => {
    let r = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, origin: 'http://evil.example.com' },
      body: '{}'
    })
    t.equal(r.status, 403)
    t.same(await r.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Forbidden Origin' } })
    r = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} })
    })
    t.equal(r.status, 400, 'loopback origins pass the origin check')
    r = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5000) } })
    })
    t.equal(r.status, 413)
    const tooLarge = {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message:
          'Request body too large: the limit is 4096 bytes (platform.mcp.body-limit-bytes, else platform.server.body-limit-bytes)',
        data: { limitBytes: 4096 }
      }
    }
    t.equal(r.headers.get('content-type'), 'application/json')
    t.same(await r.json(), tooLarge, 'a JSON-RPC error naming the limit, not the REST 413 body')
    // no Content-Length: the limit trips while reading, and the answer is the same
    const chunks = [
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'),
      Buffer.alloc(5000, 0x78),
      Buffer.from('"}}')
    ]
    const body = new ReadableStream({
      pull(c) {
        const next = chunks.shift()
        if (next === undefined) c.close()
        else c.enqueue(next)
      }
    })
    r = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half'
    } as RequestInit)
    t.equal(r.status, 413)
    t.same(await r.json(), tooLarge)
  })
})

t.test('a beforeDispatch hook can reject with a status and headers (where OAuth plugs in)', async (t) => {
  const { MCP_ERRORS } = await import('../../runtime/mcp/errors.js')
  const { PlatformError } = await import('../../runtime/contracts/index.js')
  const spans: string[] = []
  const m = await startMcp(
    {},
    {
      fixtures: false,
      extend: (p) => {
        p.extend(MCP_BEFORE_DISPATCH, (msg, ctx) => {
          if (ctx.headers?.authorization === undefined)
            throw new PlatformError(
              MCP_ERRORS.MCP_UNAUTHORIZED,
              {},
              {
                headers: {
                  'www-authenticate': 'Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"'
                }
              }
            )
        })
        p.extend(MCP_INVOCATION_WRAPPER, async (info, run) => {
          spans.push(`${info.type}:${info.name}:${info.argCount}`)
          return await run()
        })
      }
    }
  )
  t.teardown(m.tp.close)
  let r = await fetch(m.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }
    })
  })
  t.equal(r.status, 401)
  t.match(r.headers.get('www-authenticate'), /resource_metadata=/)
  t.same(await r.json(), { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Unauthorized' } })
  r = await fetch(m.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }
    })
  })
  t.equal(r.status, 200)
  m.mcp.registerTool({
    name: 'two',
    description: 'two args',
    params: [{ name: 'a' }, { name: 'b' }],
    handler: () => 'ok'
  })
  await modern(
    m.url,
    'tools/call',
    { name: 'two', arguments: { a: '1', b: '2' } },
    { headers: { authorization: 'Bearer x' } }
  )
  t.same(spans, ['tool:two:2'], 'the invocation wrapper sees every call (tracing spans)')
})

t.test('allowed-origins config admits listed origins', async (t) => {
  const m = await startMcp({ 'platform.server.allowed-origins': ['https://app.example.com'] }, { fixtures: false })
  t.teardown(m.tp.close)
  const ok = await fetch(m.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'https://app.example.com' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }
    })
  })
  t.equal(ok.status, 200)
  const no = await fetch(m.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'https://other.example.com' },
    body: '{}'
  })
  t.equal(no.status, 403)
})
