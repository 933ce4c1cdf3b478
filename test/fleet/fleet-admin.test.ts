// The admin routes and MCP tools of the fleet answer from live state: coordinators, their
// agents' health and fleet, the journal of real coordinations; MCP with the official SDK client.
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { FLEET } from '../../runtime/fleet/index.js'
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
  t.match(await log.text(), /^6 events:\n  START  boss\n  DISPATCH  say -> run\n/)
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
