// The admin routes and MCP tools of the fleet answer from live state: coordinators, their
// agents' health and fleet, the journal of real coordinations; MCP with the official SDK client.
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { agent, definePlugin } from 'uws-agent-platform/sdk'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { FLEET, type DispatchContext } from '../../runtime/fleet/index.js'
import { type AgentCall, type AgentTransport } from '../../runtime/fleet/fleet-types.js'
import { admin, ask, fleetPlatform } from './helpers.js'

const tp = await fleetPlatform()
t.teardown(tp.close)

t.test('coordinators, health, fleet and the overview count come from the loaded plugins', async (t) => {
  const list = (await admin(tp.url, '/coordinators')).body
  t.same(
    list.map((c: any) => c.name),
    ['boss', 'waiter', 'c1', 'c2', 'c3']
  )
  // ghost is not loaded: 6 of 7 available
  t.match(list[0], { name: 'boss', agentCount: 7, availableCount: 6 })
  t.equal((await admin(tp.url, '/overview')).body.coordinatorCount, 5)
  const health = (await admin(tp.url, '/coordinators/boss/health')).body
  t.match(health, { coordinator: 'boss', timestamp: String, available: true })
  t.match(health.agents[0], { name: 'say', available: true, circuitState: 'CLOSED', recentFailures: 0 })
  await ask(tp.url, 'boss', 'call', 'broken')
  const after = (await admin(tp.url, '/coordinators/boss/health')).body
  t.match(
    after.agents.find((a: any) => a.name === 'broken'),
    { recentFailures: 1, circuitState: 'CLOSED' }
  )
  t.match((await admin(tp.url, '/coordinators/boss/fleet')).body, {
    name: 'boss',
    agents: [{ name: 'say', version: '1.0.0', isAvailable: true, isLocal: true, weight: 1 }]
  })
  // the agents list marks coordinators (the dashboard badges them)
  const agents = (await admin(tp.url, '/agents')).body
  t.match(
    agents.find((a: any) => a.name === 'waiter'),
    { coordinator: true, fleet: ['sleepy', 'say'] }
  )
  t.notOk('coordinator' in agents.find((a: any) => a.name === 'say'))
  for (const path of ['/coordinators/nobody/health', '/coordinators/nobody/fleet', '/coordinators/say/health'])
    t.match(await admin(tp.url, path), { status: 404, body: { code: 'PLT_ERR_UNKNOWN_COORDINATOR' } }, path)
})

t.test('the journal routes read the coordinations that ran', async (t) => {
  const a = await ask(tp.url, 'boss', 'parallel', [{ agent: 'say', args: { message: 'x' } }, { agent: 'count' }])
  const id = a.coordinationId!
  const q = (await admin(tp.url, `/journal?coordinationId=${id}`)).body
  t.equal(q.length, 6)
  t.ok(
    q.every((e: any) => e.coordinationId === id),
    'only that coordination'
  )
  t.equal(q[0].type, 'CoordinationCompleted', 'newest first')
  const one = (await admin(tp.url, `/journal/${id}`)).body
  t.equal(one[0].type, 'CoordinationStarted', 'a coordination reads oldest first')
  t.notOk(JSON.stringify(one).includes('"x"'), 'no call args or result texts in the journal')
  const byAgent = (await admin(tp.url, '/journal?agent=count&limit=2')).body
  t.ok(byAgent.length === 2 && byAgent.every((e: any) => e.agentName === 'count'))
  t.equal((await admin(tp.url, '/journal/coord-unknown')).status, 404)
  const log = await fetch(`${tp.url}/api/admin/journal/${id}/log`)
  t.equal(log.status, 200)
  t.ok((await log.text()).startsWith('6 events:\n  START  boss\n  DISPATCH  say -> run\n'), 'the log lines')
})

t.test('admin MCP tools: platform_list_coordinators and platform_query_journal', async (t) => {
  const a = await ask(tp.url, 'boss', 'call', 'say', undefined, { message: 'mcp' })
  const c = new Client({ name: 'fleet-test', version: '1.0.0' })
  await c.connect(new StreamableHTTPClientTransport(new URL(tp.url + '/platform/mcp')))
  t.teardown(() => c.close())
  const listed = (await c.callTool({ name: 'platform_list_coordinators', arguments: {} })) as any
  t.same(JSON.parse(listed.content[0].text), (await admin(tp.url, '/coordinators')).body)
  const journal = (await c.callTool({
    name: 'platform_query_journal',
    arguments: { coordinationId: a.coordinationId }
  })) as any
  const events = JSON.parse(journal.content[0].text)
  t.same(
    events.map((e: any) => e.type),
    ['AgentCompleted', 'AgentDispatched']
  )
  t.same(events, (await admin(tp.url, `/journal?coordinationId=${a.coordinationId}`)).body)
})

t.test('with the admin plane off, coordinators still dispatch (and governance off too)', async (t) => {
  const off = await fleetPlatform({ 'platform.admin.enabled': false, 'platform.ai.governance.enabled': false })
  t.teardown(off.close)
  const a = await ask(off.url, 'boss', 'parallel', [{ agent: 'say', args: { message: 'p' } }, { agent: 'count' }])
  t.match(a.result, { say: { text: 'p', success: true }, count: { success: true } })
  t.equal((await fetch(`${off.url}/api/admin/coordinators`)).status, 404)
  const fleet = off.platform.area(FLEET)
  await fleet.journalSettled()
  t.equal((await fleet.journal.coordination(a.coordinationId!)).length, 6, 'the journal fills all the same')
})

t.test('interactions: a coordinator turn kept as an interaction, its steps and its principal', async (t) => {
  const token = 'fleet-interactions-token-0123456789'
  const tpi = await fleetPlatform({
    'platform.interactions.http-write-enabled': true,
    'platform.auth.tokens': [{ token, principal: 'carol' }],
    'platform.ai.governance.commitment-records.enabled': true
  })
  t.teardown(tpi.close)
  const res = await fetch(`${tpi.url}/api/interactions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      agentId: 'boss',
      message: JSON.stringify({ op: 'call', params: ['say', 'run', { message: 'kept' }] })
    })
  })
  const body = (await res.json()) as any
  t.equal(res.status, 200, JSON.stringify(body))
  t.match(body, { status: 'COMPLETED', agentId: 'boss', userId: 'carol' })
  t.match(JSON.parse(body.finalText), { agentName: 'say', text: 'kept', success: true })
  // the dispatch is a step of the interaction, with its coordination
  t.match(body.steps[0], {
    type: 'agent-step',
    toolName: 'executing',
    data: { data: { coordinationId: /^coord-/, agent: 'say' } }
  })
  const records = (await admin(tpi.url, '/governance/commitments?limit=10')).body
  t.ok(records.length === 3 && records.every((r: any) => r.principal === 'carol' && r.issuer === 'coordinator:boss'))
})

t.test('an agent not hosted here is reached through a registered transport, with the same rules', async (t) => {
  const fleet = tp.platform.area(FLEET)
  const seen: { call: AgentCall; ctx: DispatchContext }[] = []
  let fails = 1
  // stands for a remote (A2A) agent: the seam's other side, not a part of this platform
  const remote: AgentTransport = {
    kind: 'a2a',
    call: async (call, ctx) => {
      seen.push({ call, ctx })
      if (fails-- > 0) throw new Error('connection reset')
      return {
        agentName: call.agent,
        skillId: call.skill,
        text: `remote ${String(call.args.message)}`,
        metadata: { transport: 'a2a' },
        durationMs: 1,
        success: true
      }
    }
  }
  const off = fleet.registerTransport('ghost', remote)
  t.teardown(off)
  t.match((await admin(tp.url, '/coordinators/boss/fleet')).body.agents.at(-1), {
    name: 'ghost',
    isAvailable: true,
    isLocal: false
  })
  const a = await ask(tp.url, 'boss', 'call', 'ghost', 'run', { message: 'hi' })
  t.match(a.result, { success: false, text: 'connection reset', metadata: { attempts: 1 } })
  const b = await ask(tp.url, 'boss', 'call', 'ghost', 'run', { message: 'again' })
  t.match(b.result, { success: true, text: 'remote again', metadata: { transport: 'a2a', attempts: 1 } })
  t.match(seen.at(-1)!.ctx, { coordinationId: b.coordinationId, coordinator: 'boss', principal: 'anonymous' })
  off()
  t.match((await ask(tp.url, 'boss', 'call', 'ghost')).result, { text: "Agent 'ghost' is not available (not loaded)" })
})

t.test('a descriptor whose fleet the host refuses: the coordinator is listed, unavailable, and says why', async (t) => {
  // what a plugin could hand over by building its agent around the SDK's checks
  const ref = {
    name: 'say',
    version: '',
    required: true,
    weight: 1,
    maxRetries: 0,
    circuitBreaker: false,
    timeoutMs: 0,
    maxTurns: 0
  }
  const forged = {
    ...agent({
      name: 'forged',
      fleet: ['say'],
      run: async (_turn: unknown, ctx: any) => JSON.stringify(await ctx.fleet.call('say', 'run', { message: 'x' }))
    }),
    fleet: [ref, ref]
  }
  const manifest: Manifest = {
    name: 'forger',
    version: '0.0.1',
    entry: 'index.js',
    sandbox: 'inline',
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
  }
  tp.platform.plugins.set(
    '/plugins/forger',
    manifest,
    inlineInstance(definePlugin({ agents: [forged] }), {
      log: tp.platform.logger,
      agent: (op, args) => tp.platform.plugins.agentTurns.call('forger', op, args)
    })
  )
  t.teardown(() => tp.platform.plugins.remove('forger'))
  const why = "Duplicate agent reference 'say' in coordinator 'forged'"
  t.match((await admin(tp.url, '/coordinators/forged/health')).body, { available: false, error: why, agents: [] })
  t.match((await ask(tp.url, 'forged', 'call')).result, { success: false, text: why })
  t.equal(tp.logs.filter((l) => String(l.msg).startsWith(why)).length, 1, 'logged once')
})
