import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportArea } from '../../runtime/transport/install.js'
import { transportOf } from '../../runtime/transport/index.js'
import { lpMember, refusedUpgrade, sseMember, wsMember, wsUrl } from '../transport/clients.js'
import { startDemoPlatform } from './demo-platform.js'
import { agentSocket, sseAgent } from '../ai/agent-clients.js'

// Hostile-client corpus: one address opening room members and agent connections without end.
// Each transport holds at most the configured number per client address (loopback counted like
// any other); beyond it HTTP joins get 429 and WebSocket upgrades are refused with 429 before
// upgrading. Other addresses are unaffected, and a connection that goes gives its place back.

const CAP = 5

/** A WebSocket from a chosen loopback source address; resolves once it is open. */
function wsFrom(url: string, localAddress: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress })
    ws.once('open', () => resolve(ws))
    ws.once('unexpected-response', (_req, res) => reject(new Error('refused ' + String(res.statusCode))))
    ws.once('error', reject)
  })
}

t.test('room members per address and transport: 429 beyond the cap, places given back on leave', async (t) => {
  const tp = await startTestPlatform(
    { 'platform.transport.rooms.max-members-per-address': CAP },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp.close)
  const tr = transportOf(tp.platform)
  const held: (() => void)[] = []
  t.teardown(() => {
    for (const close of held) close()
  })

  const sockets = []
  for (let i = 0; i < CAP; i++) {
    const m = await wsMember(tp.url, 'crowd', '?presence=false')
    sockets.push(m)
    held.push(() => m.ws.terminate())
  }
  const refused = await refusedUpgrade(wsUrl(tp.url, '/platform/rooms/crowd'))
  t.equal(refused.status, 429, 'the upgrade beyond the cap is refused before upgrading')
  t.match(refused.body, {
    code: 'PLT_ERR_TOO_MANY_CONNECTIONS',
    error: /at most 5 \(platform\.transport\.rooms\.max-members-per-address\)/
  })
  t.equal(tr.findBroadcaster('/platform/rooms/crowd')!.resources.size, CAP, 'no member made for it')

  // counted per transport: SSE and long-polling have their own places
  for (let i = 0; i < CAP; i++) {
    const s = await sseMember(tp.url, 'crowd', '?presence=false')
    held.push(s.abort)
  }
  const sse = await fetch(tp.url + '/platform/rooms/crowd', { headers: { accept: 'text/event-stream' } })
  t.equal(sse.status, 429, 'SSE beyond the cap')
  t.match(await sse.json(), { code: 'PLT_ERR_TOO_MANY_CONNECTIONS', error: /SSE/ })
  for (let i = 0; i < CAP; i++) {
    const l = await lpMember(tp.url, 'crowd', '&presence=false')
    held.push(l.stop)
  }
  const lp = await fetch(tp.url + '/platform/rooms/other?transport=long-polling')
  t.equal(lp.status, 429, 'long-polling beyond the cap, in any room')
  t.match(await lp.json(), { code: 'PLT_ERR_TOO_MANY_CONNECTIONS', error: /long-polling/ })

  // another address is not this one's count
  const other = await wsFrom(wsUrl(tp.url, '/platform/rooms/crowd'), '127.0.0.2')
  held.push(() => other.terminate())

  // a member that leaves gives its place back
  const first = sockets[0]!
  first.ws.close()
  await first.closed
  const again = await wsMember(tp.url, 'crowd', '?presence=false')
  held.push(() => again.ws.terminate())
  t.ok(again.uuid, 'a new member fits once one left')
})

t.test('agent connections per address: WebSocket and SSE beyond the cap get 429, no session', async (t) => {
  const tp = await startDemoPlatform({ 'platform.ai.endpoint.max-connections-per-address': 3 })
  t.teardown(tp.close)
  const path = '/platform/agent/demo'
  const held: (() => void)[] = []
  t.teardown(() => {
    for (const close of held) close()
  })
  for (let i = 0; i < 3; i++) {
    const s = await agentSocket(tp.url, path)
    t.ok(s.session, `socket ${i + 1} has a session`)
    held.push(() => s.ws.terminate())
  }
  let started = 0
  const off = tp.platform.bus.on('AgentSessionStarted', () => started++)
  t.teardown(off)
  const refused = await refusedUpgrade(wsUrl(tp.url, path))
  t.equal(refused.status, 429)
  t.match(refused.body, {
    code: 'PLT_ERR_TOO_MANY_CONNECTIONS',
    error: /agent connections .* \(platform\.ai\.endpoint\.max-connections-per-address\)/
  })
  const sseMembers = []
  for (let i = 0; i < 3; i++) sseMembers.push(await sseAgent(tp.url, path))
  const sse = await fetch(tp.url + path, { headers: { accept: 'text/event-stream' } })
  t.equal(sse.status, 429, 'SSE beyond the cap')
  t.match(await sse.json(), { code: 'PLT_ERR_TOO_MANY_CONNECTIONS', error: /SSE/ })
  t.equal(started, 3, 'only the three SSE members got sessions')
  // a member that leaves gives its place back
  await sseMembers[0]!.stop()
  const again = await sseAgent(tp.url, path)
  t.ok(again.session, 'a new SSE member fits once one left')
  for (const m of [...sseMembers.slice(1), again]) await m.stop()
})
