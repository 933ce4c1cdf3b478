// The admin MCP tools, called with the official MCP SDK client over Streamable HTTP: the read tools
// answer what the admin routes answer, the write tools are absent by default and gated when enabled.
import type { Test } from 'tap'
import t from 'tap'
import WebSocket from 'ws'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { adminPlatform, call, addHelperAgent, ALICE, BOB, CAROL, WRITER } from './helpers.js'
import { wsMember } from '../transport/clients.js'
import { AI } from '../../runtime/ai/index.js'
import type { TestPlatform } from '../helpers/platform.js'

const READ = [
  'platform_overview',
  'platform_list_broadcasters',
  'platform_list_resources',
  'platform_list_agents',
  'platform_agent_sessions',
  'platform_list_handlers',
  'platform_list_interceptors',
  'platform_audit_log',
  'platform_list_coordinators',
  'platform_query_journal',
  'platform_list_tasks',
  'platform_list_runtimes',
  'platform_ai_metrics',
  'platform_list_mcp_tools'
]
const WRITE = [
  'platform_broadcast',
  'platform_disconnect_resource',
  'platform_destroy_broadcaster',
  'platform_cancel_task'
]

async function client(t: Test, tp: TestPlatform, token?: string): Promise<Client> {
  const c = new Client({ name: 'admin-test', version: '1.0.0' })
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  await c.connect(new StreamableHTTPClientTransport(new URL(tp.url + '/platform/mcp'), { requestInit: { headers } }))
  t.teardown(() => c.close())
  return c
}

/** A tool's result: its structuredContent, after checking the text block carries the same JSON. */
async function use(t: Test, c: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = (await c.callTool({ name, arguments: args })) as any
  // before protocol 2026-07-28 a list travels in structuredContent as {result}
  const text = JSON.parse(r.content[0].text)
  t.same(Array.isArray(text) ? { result: text } : text, r.structuredContent, `${name}: JSON text = structuredContent`)
  return r
}

const platformTools = async (c: Client): Promise<string[]> =>
  (await c.listTools()).tools.map((x) => x.name).filter((n) => n.startsWith('platform_'))

t.test('read tools answer what the admin routes answer', async (t) => {
  const tp = await adminPlatform(WRITER)
  t.teardown(tp.close)
  addHelperAgent(tp)
  const c = await client(t, tp)
  const listed = (await c.listTools()).tools
  t.same((await platformTools(c)).sort(), [...READ].sort(), 'every read tool, no write tool by default')
  const audit = listed.find((x) => x.name === 'platform_audit_log')!
  t.match(audit.inputSchema.properties, { limit: { type: 'integer', minimum: 1 } }, 'a limit is an integer')
  t.same(listed.find((x) => x.name === 'platform_agent_sessions')!.inputSchema.required, ['name'])

  const member = await wsMember(tp.url, 'mcp')
  t.teardown(() => member.ws.close())
  const session = tp.platform.area(AI).sessions.start('helper', 'websocket')

  // (the MCP client's own session is no transport resource: counts match the REST answer)
  for (const [tool, path, args] of [
    ['platform_overview', '/overview', {}],
    ['platform_list_broadcasters', '/broadcasters', {}],
    [
      'platform_list_resources',
      '/resources?broadcaster=%2Fplatform%2Frooms%2Fmcp',
      { broadcaster: '/platform/rooms/mcp' }
    ],
    ['platform_list_agents', '/agents', {}],
    ['platform_agent_sessions', '/agents/helper/sessions', { name: 'helper' }],
    ['platform_list_handlers', '/handlers', {}],
    ['platform_list_interceptors', '/interceptors', {}],
    ['platform_list_coordinators', '/coordinators', {}],
    ['platform_list_runtimes', '/runtimes', {}],
    ['platform_list_mcp_tools', '/mcp/tools', {}]
  ] as const) {
    const r = await use(t, c, tool, args)
    t.equal(r.isError, false, tool)
    const rest = (await call(tp, 'GET', path)).body
    t.same(Array.isArray(rest) ? r.structuredContent.result : r.structuredContent, rest, `${tool} = GET ${path}`)
  }
  const overview = (await use(t, c, 'platform_overview')).structuredContent
  t.match(overview, { connections: 1, broadcasters: 1, agentCount: 1, activeSessions: 1 })
  const sessions = (await use(t, c, 'platform_agent_sessions', { name: 'helper' })).structuredContent.result
  t.same(
    sessions.map((s: any) => s.sessionId),
    [session.sessionId]
  )
  t.match((await use(t, c, 'platform_ai_metrics')).structuredContent, {
    connections: { active: Number },
    activeBroadcasters: 1
  })
  const unknown = await use(t, c, 'platform_agent_sessions', { name: 'nobody' })
  t.equal(unknown.isError, true)
  t.match(unknown.structuredContent, { code: 'PLT_ERR_AGENT_NOT_FOUND' })

  // content reads pass the content read gate with the MCP request's principal
  const anon = await use(t, c, 'platform_audit_log')
  t.equal(anon.isError, true)
  t.match(anon.structuredContent, { code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED' })
  t.match((await use(t, c, 'platform_query_journal')).structuredContent, {
    code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED'
  })
  // a task id is the handle an anonymous A2A caller reads its task by: the list is content
  t.match((await use(t, c, 'platform_list_tasks')).structuredContent, {
    code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED'
  })
  const bob = await client(t, tp, BOB)
  await call(tp, 'POST', '/broadcasters/broadcast', { token: BOB, body: { broadcasterId: 'x', message: 1 } })
  const log = await use(t, bob, 'platform_audit_log', { limit: 5 })
  t.equal(log.isError, false)
  t.same(log.structuredContent.result, tp.platform.audit.entries(5))
  t.match(log.structuredContent.result.at(-1), { principal: 'bob', action: 'broadcast.denied.role' })
  t.notOk('nextCursor' in log.structuredContent, 'no older entries: no cursor')

  // one page at a time: a result's nextCursor is the cursor of the call for the page before it
  await call(tp, 'POST', '/broadcasters/broadcast', { token: BOB, body: { broadcasterId: 'y', message: 2 } })
  const newest = await use(t, bob, 'platform_audit_log', { limit: 1 })
  t.same(newest.structuredContent.result, tp.platform.audit.entries(1))
  t.equal(newest.structuredContent.nextCursor, tp.platform.audit.page(1)!.nextCursor, 'the X-Next-Cursor of REST')
  const older = await use(t, bob, 'platform_audit_log', { limit: 1, cursor: newest.structuredContent.nextCursor })
  t.same(older.structuredContent.result, tp.platform.audit.entries(2).slice(0, 1))
  const bad = await use(t, bob, 'platform_audit_log', { limit: 1, cursor: 'not-a-cursor' })
  t.equal(bad.isError, true)
  t.match(bad.structuredContent, { code: 'PLT_ERR_INVALID_CURSOR' })
  t.same((await use(t, bob, 'platform_query_journal', { limit: 3 })).structuredContent.result, [])
  t.same((await use(t, bob, 'platform_list_tasks')).structuredContent.result, [])

  // typed input: a limit that is no integer, or out of range, is refused before the route runs
  for (const limit of ['5', 2.5, 0]) {
    const bad = (await bob.callTool({ name: 'platform_audit_log', arguments: { limit } })) as any
    t.equal(bad.isError, true, `limit ${JSON.stringify(limit)} refused`)
  }
  t.equal(((await bob.callTool({ name: 'platform_overview', arguments: { extra: 1 } })) as any).isError, true)
})

t.test('write tools: absent by default, gated and audited with the MCP principal when enabled', async (t) => {
  const tp = await adminPlatform({ ...WRITER, 'platform.admin.mcp-write-tools': true })
  t.teardown(tp.close)
  const anon = await client(t, tp)
  const alice = await client(t, tp, ALICE)
  const bob = await client(t, tp, BOB)
  const carol = await client(t, tp, CAROL)
  t.same((await platformTools(alice)).sort(), [...READ, ...WRITE].sort())
  const broadcast = (await alice.listTools()).tools.find((x) => x.name === 'platform_broadcast')!
  t.same(broadcast.inputSchema.required, ['broadcasterId', 'message'])

  const member = await wsMember(tp.url, 'w')
  const room = '/platform/rooms/w'
  const args = { broadcasterId: room, message: { alert: 'from mcp' } }
  for (const [c, code, action, principal] of [
    [anon, 'PLT_ERR_ADMIN_AUTH_REQUIRED', 'broadcast.denied.anonymous', 'anonymous'],
    [bob, 'PLT_ERR_ADMIN_ROLE_REQUIRED', 'broadcast.denied.role', 'bob'],
    [carol, 'PLT_ERR_ADMIN_FORBIDDEN', 'broadcast.denied.authz', 'carol']
  ] as const) {
    const r = await use(t, c, 'platform_broadcast', args)
    t.equal(r.isError, true)
    t.match(r.structuredContent, { code }, action)
    t.match(tp.platform.audit.entries(1)[0], { action, target: room, success: false, principal })
  }
  const ok = await use(t, alice, 'platform_broadcast', args)
  t.same(ok.structuredContent, { status: 'broadcast sent' })
  t.equal((await member.inbox.next((f) => f.alert !== undefined)).alert, 'from mcp')
  t.match(tp.platform.audit.entries(1)[0], { principal: 'alice', action: 'broadcast', target: room, success: true })

  // a failure after the gate is a tool error and an audited failure
  const missing = await use(t, alice, 'platform_destroy_broadcaster', { id: 'nope' })
  t.match(missing.structuredContent, { code: 'PLT_ERR_UNKNOWN_BROADCASTER' })
  t.match(tp.platform.audit.entries(1)[0], { action: 'destroy_broadcaster', target: 'nope', success: false })
  t.match((await use(t, alice, 'platform_cancel_task', { taskId: 't-1' })).structuredContent, {
    code: 'PLT_ERR_UNKNOWN_TASK'
  })

  const other = await wsMember(tp.url, 'w')
  t.same((await use(t, alice, 'platform_disconnect_resource', { uuid: other.uuid })).structuredContent, {
    status: 'resource disconnected'
  })
  t.same((await other.closed).code, 1000)
  t.same((await use(t, alice, 'platform_destroy_broadcaster', { id: room })).structuredContent, {
    status: 'broadcaster destroyed'
  })
  await member.closed
  t.equal(tp.platform.audit.entries(1)[0]!.action, 'destroy_broadcaster')
})

t.test('over MCP WebSocket the principal of the upgrade, roles included, reaches the write gate', async (t) => {
  const tp = await adminPlatform({ ...WRITER, 'platform.admin.mcp-write-tools': true })
  t.teardown(tp.close)
  const member = await wsMember(tp.url, 'ws')
  const rpc = async (token: string, name: string, args: Record<string, unknown>): Promise<any> => {
    const ws = new WebSocket(tp.url.replace(/^http/, 'ws') + '/platform/mcp', {
      headers: { authorization: `Bearer ${token}` }
    })
    const answers: any[] = []
    ws.on('message', (d) => answers.push(JSON.parse(String(d))))
    await new Promise((r) => ws.once('open', r))
    const ask = async (id: number, method: string, params: Record<string, unknown>) => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
      for (let i = 0; i < 500 && !answers.some((a) => a.id === id); i++) await new Promise((r) => setTimeout(r, 10))
      return answers.find((a) => a.id === id)
    }
    await ask(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' }
    })
    const out = await ask(2, 'tools/call', { name, arguments: args })
    ws.close()
    return out.result
  }
  const args = { broadcasterId: '/platform/rooms/ws', message: 'over ws' }
  t.match((await rpc(BOB, 'platform_broadcast', args)).structuredContent, { code: 'PLT_ERR_ADMIN_ROLE_REQUIRED' })
  t.same((await rpc(ALICE, 'platform_broadcast', args)).structuredContent, { status: 'broadcast sent' })
  t.same(await member.inbox.next((f) => f.raw === 'over ws'), { raw: 'over ws' })
  t.match(tp.platform.audit.entries(1)[0], { principal: 'alice', action: 'broadcast', success: true })
  member.ws.close()
})

t.test('platform.admin.mcp-tools=false and platform.admin.enabled=false register none', async (t) => {
  for (const overrides of [{ 'platform.admin.mcp-tools': false }, { 'platform.admin.enabled': false }]) {
    const tp = await adminPlatform({ ...overrides, 'platform.admin.mcp-write-tools': true })
    t.teardown(tp.close)
    t.same(await platformTools(await client(t, tp)), [], JSON.stringify(overrides))
  }
})
