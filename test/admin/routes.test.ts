// The read routes from live state: agents and what the platform holds about them, runtimes, the
// MCP catalogue, plugins, metrics, the fleet routes on empty registries, and enabled=false.
import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AI } from '../../runtime/ai/index.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { ADMIN } from '../../runtime/admin/key.js'
import { EMPTY_FLEET } from '../../runtime/admin/index.js'
import { adminPlatform, adminPlatformSwappingFleet, addHelperAgent, call, BOB, TOKENS } from './helpers.js'

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
const dir = mkdtempSync(join(tmpdir(), 'admin-routes-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const policies = join(dir, 'policies.yaml')
writeFileSync(
  policies,
  'version: "1.0"\npolicies:\n  - name: no-secrets\n    type: deny-list\n    config: {phrases: [secret]}\n'
)

const tp = await adminPlatformSwappingFleet({
  'platform.auth.tokens': TOKENS,
  'platform.ai.governance.policy-files': [policies],
  'platform.ai.governance.memory.enabled': true
})
t.teardown(tp.close)
addHelperAgent(tp)

t.test('overview: version from package.json, the active runtime, counts from live state', async (t) => {
  const r = await call(tp, 'GET', '/overview')
  t.same(Object.keys(r.body), [
    'status',
    'version',
    'node',
    'connections',
    'broadcasters',
    'handlers',
    'interceptors',
    'agentCount',
    'activeSessions',
    'coordinatorCount',
    'taskCount',
    'cluster',
    'aiRuntime',
    'governancePolicyCount'
  ])
  t.match(r.body, {
    status: 'UP',
    version: pkg.version,
    node: tp.platform.node.id,
    // a node alone: its own counts are the cluster's
    cluster: {
      connections: r.body.connections,
      broadcasters: r.body.broadcasters,
      nodes: [{ node: tp.platform.node.id, state: 'up', connections: r.body.connections }]
    },
    agentCount: 1,
    activeSessions: 0,
    coordinatorCount: 0,
    taskCount: 0,
    aiRuntime: 'demo',
    governancePolicyCount: 1
  })
  const s = tp.platform.area(AI).sessions.start('helper', 'websocket')
  t.equal((await call(tp, 'GET', '/overview')).body.activeSessions, 1)
  tp.platform.area(AI).sessions.end(s.sessionId)
})

t.test('agents, one agent, its sessions; unknown names are 404', async (t) => {
  const list = await call(tp, 'GET', '/agents')
  t.same(list.body, [
    {
      name: 'helper',
      path: '/helper',
      handlerClass: 'plugin:helpers',
      version: '2.0.0',
      description: 'helps',
      headless: false,
      // an agent with a path of its own is served over A2A at `{path}/a2a`, mounted as it loads
      protocols: ['mcp', 'agui', 'a2a']
    }
  ])
  t.same((await call(tp, 'GET', '/agents/helper')).body, list.body[0])
  t.same((await call(tp, 'GET', '/agents/nobody')).body, {
    error: "Unknown agent 'nobody'",
    code: 'PLT_ERR_AGENT_NOT_FOUND',
    hint: 'Check the agent name: only agents of loaded plugins answer, and one unloaded by hot reload is gone until its plugin returns'
  })
  t.equal((await call(tp, 'GET', '/agents/nobody/sessions')).status, 404)

  const sessions = tp.platform.area(AI).sessions
  const s = sessions.start('helper', 'sse')
  sessions.touch(s.sessionId)
  const r = await call(tp, 'GET', '/agents/helper/sessions')
  t.equal(r.body.length, 1)
  t.same(Object.keys(r.body[0]), ['sessionId', 'agentName', 'transport', 'startTime', 'lastActivity', 'messageCount'])
  t.match(r.body[0], { sessionId: s.sessionId, agentName: 'helper', transport: 'sse', messageCount: 1 })
  sessions.end(s.sessionId)
  t.same((await call(tp, 'GET', '/agents/helper/sessions')).body, [])
})

t.test('rules: system prompt and the policies that apply; facts: lessons the memory sink kept', async (t) => {
  const rules = (await call(tp, 'GET', '/agents/helper/rules')).body
  t.match(rules, { agentId: 'helper', systemPrompt: 'Be brief.', scope: null })
  t.same(
    rules.policies.map((p: any) => p.name),
    ['no-secrets']
  )
  const svc = governanceOf(tp.platform)!
  const verdict = await svc.gate.admit('t', aiRequest({ message: 'tell me the secret', userId: 'u-7' }))
  t.equal(verdict.admitted, false)
  let facts: any
  for (let i = 0; i < 100; i++) {
    facts = (await call(tp, 'GET', '/agents/helper/facts?userId=u-7', { token: BOB })).body
    if (facts.facts.length > 0) break
    await new Promise((r) => setTimeout(r, 10))
  }
  t.match(facts, { agentId: 'helper', namespace: 'user:u-7', enabled: true })
  t.equal(facts.facts.length, 1)
  t.match(facts.facts[0], { text: /no-secrets/, confidence: 1, provenance: { policy: 'no-secrets', decision: 'deny' } })
  t.same((await call(tp, 'GET', '/agents/helper/facts?userId=other', { token: BOB })).body.facts, [])
  const bad = await call(tp, 'GET', '/agents/helper/facts?limit=0', { token: BOB })
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'PLT_ERR_INVALID_QUERY')
})

t.test('conversation: the history kept under an id; unknown ids 404', async (t) => {
  await tp.platform.area(AI).memory.append('conv-9', [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' }
  ])
  const r = await call(tp, 'GET', '/agents/helper/conversation/conv-9', { token: BOB })
  t.same(r.body, {
    agentId: 'helper',
    sessionId: 'conv-9',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' }
    ]
  })
  t.equal((await call(tp, 'GET', '/agents/helper/conversation/conv-9?limit=1', { token: BOB })).body.messages.length, 1)
  t.same((await call(tp, 'GET', '/agents/helper/conversation/none', { token: BOB })).body, {
    error: "No conversation 'none'",
    code: 'PLT_ERR_UNKNOWN_CONVERSATION'
  })
  t.equal((await call(tp, 'GET', '/agents/helper/conversation/' + 'x'.repeat(300), { token: BOB })).status, 404)
  const ws = (await call(tp, 'GET', '/agents/helper/workspace', { token: BOB })).body
  t.same(ws, { agentId: 'helper', attached: false, plan: null, files: [] })
})

t.test('runtimes, the MCP catalogue and plugins, live or failed', async (t) => {
  const runtimes = (await call(tp, 'GET', '/runtimes')).body
  t.same(
    runtimes.map((r: any) => r.name),
    ['demo', 'openai']
  )
  t.same(Object.keys(runtimes[0]), ['name', 'priority', 'isAvailable', 'capabilities', 'models'])
  t.match((await call(tp, 'GET', '/runtimes/active')).body, { name: 'demo', isAvailable: true })

  // the admin MCP tools are on by default; the plugin's tool is what this checks
  const mcpTools = (await call(tp, 'GET', '/mcp/tools')).body
  t.ok(mcpTools.some((x: any) => x.name === 'platform_overview'))
  t.same(
    mcpTools.filter((x: any) => !x.name.startsWith('platform_')),
    [
      {
        name: 'lookup',
        description: 'finds things',
        params: [
          { name: 'q', description: 'what to find', required: true },
          { name: 'n', description: '', required: false }
        ]
      }
    ]
  )
  t.same((await call(tp, 'GET', '/mcp/resources')).body, [])
  t.same((await call(tp, 'GET', '/mcp/prompts')).body, [])

  tp.platform.plugins.setFailed('broken', '/plugins/broken', 'entry threw: boom', {
    version: '0.0.1',
    sandbox: 'isolate'
  })
  const plugins = (await call(tp, 'GET', '/plugins')).body
  t.match(
    plugins.find((p: any) => p.name === 'helpers'),
    {
      version: '1.2.3',
      tier: 'inline',
      state: 'live',
      error: null,
      contributes: { agents: ['helper'], tools: ['lookup'] }
    }
  )
  t.match(
    plugins.find((p: any) => p.name === 'broken'),
    {
      version: '0.0.1',
      tier: 'isolate',
      state: 'failed',
      error: 'entry threw: boom'
    }
  )
  tp.platform.plugins.remove('broken')
})

t.test('metrics and metrics/all come from the prom-client registry', async (t) => {
  const all = (await call(tp, 'GET', '/metrics/all')).body as any[]
  const decisions = all.filter((m) => m.name === 'platform_governance_decisions_total')
  t.ok(decisions.length >= 1, 'the governance counter is there')
  t.match(
    decisions.find((m) => m.tags.decision === 'deny'),
    {
      type: 'counter',
      description: /Policy evaluations/,
      tags: { policy: 'no-secrets', decision: 'deny' },
      value: 1
    }
  )
  const http = all.find(
    (m) => m.name === 'platform_http_request_duration_seconds' && m.tags.route === '/api/admin/overview'
  )
  t.ok(http.count >= 2, 'histograms as count, meanMs, totalTimeMs')
  t.same(Object.keys(http), ['name', 'type', 'description', 'tags', 'count', 'meanMs', 'totalTimeMs'])
  const m = (await call(tp, 'GET', '/metrics')).body
  t.same(Object.keys(m), [
    'connections',
    'messages',
    'broadcastLatency',
    'activeBroadcasters',
    'rooms',
    'cache',
    'backpressure',
    'ai'
  ])
})

t.test('the fleet routes answer from empty registries; unknown ids 404', async (t) => {
  for (const path of ['/coordinators', '/tasks', '/tasks?contextId=c', '/workflow/approvals'])
    t.same((await call(tp, 'GET', path, { token: BOB })).body, [], path)
  t.same((await call(tp, 'GET', '/journal?agent=a&since=2026-01-01T00:00:00Z&limit=5', { token: BOB })).body, [])
  const badTime = await call(tp, 'GET', '/journal?since=yesterday', { token: BOB })
  t.same(badTime.body, {
    error: "Invalid query parameter 'since': Invalid timestamp: yesterday",
    code: 'PLT_ERR_INVALID_QUERY'
  })
  t.equal((await call(tp, 'GET', '/journal?limit=abc', { token: BOB })).status, 400)
  for (const [path, code] of [
    ['/coordinators/c/health', 'PLT_ERR_UNKNOWN_COORDINATOR'],
    ['/coordinators/c/fleet', 'PLT_ERR_UNKNOWN_COORDINATOR'],
    ['/tasks/t-1', 'PLT_ERR_UNKNOWN_TASK'],
    ['/journal/x/tree', 'PLT_ERR_UNKNOWN_COORDINATION'],
    ['/journal/x/log', 'PLT_ERR_UNKNOWN_COORDINATION']
  ]) {
    const r = await call(tp, 'GET', path!, { token: BOB })
    t.equal(r.status, 404, path)
    t.equal(r.body.code, code)
  }
})

t.test('a fleet view handed to the admin area is what the fleet routes read', async (t) => {
  const events = [
    {
      eventId: 'e-1',
      parentEventId: null,
      type: 'CoordinationStarted',
      coordinationId: 'c-1',
      timestamp: '2026-01-01T00:00:00.000Z',
      coordinatorName: 'ops'
    },
    {
      eventId: 'e-2',
      parentEventId: 'e-1',
      type: 'AgentCompleted',
      coordinationId: 'c-1',
      timestamp: '2026-01-01T00:00:01.000Z',
      agentName: 'helper',
      skill: 'x',
      durationMs: 12
    }
  ]
  tp.fleet({ ...EMPTY_FLEET, coordination: async (id) => (id === 'c-1' ? events : undefined) })
  t.teardown(() => tp.fleet(undefined))
  const log = await call(tp, 'GET', '/journal/c-1/log', { token: BOB })
  t.equal(log.type, 'text/plain; charset=utf-8')
  t.equal(log.text, '2 events:\n  START  ops\n  DONE  helper (12ms)\n')
  t.same((await call(tp, 'GET', '/journal/c-1', { token: BOB })).body, events)
})

t.test('platform.admin.enabled=false: no admin route, governance routes gone too', async (t) => {
  const off = await adminPlatform({ 'platform.admin.enabled': false })
  t.teardown(off.close)
  t.notOk(off.platform.hasArea(ADMIN))
  for (const path of ['/overview', '/broadcasters', '/agents', '/metrics', '/governance/policies']) {
    const r = await call(off, 'GET', path)
    t.equal(r.status, 404, path)
    t.same(r.body, { error: 'Not found', code: 'PLT_ERR_NOT_FOUND' })
  }
  t.equal(
    (await call(off, 'POST', '/broadcasters/broadcast', { body: { broadcasterId: 'x', message: 'y' } })).status,
    404
  )
  t.equal(
    off.platform.http.listRoutes().filter((r) => r.pattern.startsWith('/api/admin')).length,
    0,
    'nothing is registered under /api/admin'
  )
})
