import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportArea } from '../../runtime/transport/install.js'
import { transportOf } from '../../runtime/transport/index.js'
import { AddressCap, type PeerSocket } from '../../runtime/transport/address-cap.js'
import { lpMember, refusedUpgrade, sseMember, wsMember, wsUrl } from '../transport/clients.js'
import { startDemoPlatform } from './demo-platform.js'
import { agentSocket, sseAgent } from '../ai/agent-clients.js'

// Hostile-client corpus: one address opening room members and agent connections without end.
// Each transport holds at most the configured number per client address (loopback counted like
// any other); beyond it HTTP joins get 429 and WebSocket upgrades are refused with 429 before
// upgrading. Other addresses are unaffected, and a connection that goes gives its place back.

const CAP = 5

/** A WebSocket from a chosen loopback source address; resolves once it is open. */
function wsFrom(url: string, localAddress: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress, headers })
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
  // no proxy is trusted: a client cannot step around the cap by naming another address
  const claimed = await refusedUpgrade(wsUrl(tp.url, '/platform/rooms/crowd'), { 'x-forwarded-for': '203.0.113.9' })
  t.equal(claimed.status, 429, 'X-Forwarded-For from a client is ignored')

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

/** A WebSocket upgrade from a chosen loopback source address: the open socket, or the refusal's status and body. */
function upgradeFrom(url: string, localAddress: string): Promise<{ ws?: WebSocket; status: number; body?: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress })
    ws.once('open', () => resolve({ ws, status: 101 }))
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }))
    })
    ws.once('error', reject)
  })
}

t.test('WebSocket places taken without reading the address are still exact per address', async (t) => {
  const max = 3
  const tp = await startTestPlatform(
    { 'platform.transport.rooms.max-members-per-address': max },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp.close)
  const open = new Map<string, WebSocket[]>()
  t.teardown(() => {
    for (const list of open.values()) for (const ws of list) ws.terminate()
  })
  const url = wsUrl(tp.url, '/platform/rooms/mixed?presence=false')
  const join = async (from: string) => {
    const r = await upgradeFrom(url, from)
    t.equal(r.status, 101, `a member from ${from} fits`)
    if (r.ws !== undefined) open.set(from, [...(open.get(from) ?? []), r.ws])
  }
  const refused = async (from: string, what: string) => {
    const r = await upgradeFrom(url, from)
    r.ws?.terminate()
    t.equal(r.status, 429, what)
    t.match(r.body, { code: 'PLT_ERR_TOO_MANY_CONNECTIONS', error: new RegExp(`from ${from.replace(/\./g, '\\.')}`) })
  }
  // the place is given back when the server has forgotten the member, not when the client sees the close
  const leave = async (from: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const gone = new Promise<void>((resolve) => {
        const off = tp.platform.bus.on('ResourceDisconnected', () => {
          off()
          resolve()
        })
      })
      open.get(from)!.shift()!.close()
      await gone
    }
  }

  // below the maximum live: two addresses join without their addresses being read
  await join('127.0.0.2')
  await join('127.0.0.2')
  await join('127.0.0.3')
  // at the maximum: the ones not yet counted by address are, and each new one is
  await join('127.0.0.2')
  await refused(
    '127.0.0.2',
    'the fourth from one address is refused although its first two were not counted by address'
  )
  await join('127.0.0.3')
  await join('127.0.0.3')
  await refused('127.0.0.3', 'the other address has its own maximum')
  // after closes the live count is below the maximum again, and new places go uncounted by address
  await leave('127.0.0.2', 3)
  await leave('127.0.0.3', 2)
  await join('127.0.0.2')
  await join('127.0.0.2')
  await join('127.0.0.2')
  await refused('127.0.0.2', 'refused again once it holds the maximum')
  await leave('127.0.0.2', 1)
  await join('127.0.0.2')
  await refused('127.0.0.2', 'a place given back after counting is taken once')
  await join('127.0.0.4')
})

t.test('an address cap reads no address while fewer than its maximum are live, and each one once after', (t) => {
  const cap = new AddressCap({ max: 2, key: 'test.max', what: 'members' })
  const reads: string[] = []
  const peer = (address: string): PeerSocket => ({
    getRemoteAddressAsText: () => {
      reads.push(address)
      return new TextEncoder().encode(address).buffer
    }
  })
  const a1 = cap.takeDeferred(peer('10.0.0.1'), 'WebSocket')
  const gone = cap.takeDeferred(peer('10.0.0.9'), 'WebSocket')
  gone.release()
  const a2 = cap.takeDeferred(peer('10.0.0.1'), 'WebSocket')
  t.same(reads, [], 'none read below the maximum, and a released one never')
  // SSE counts apart: its live count is not the WebSocket one
  cap.take('10.0.0.1', 'SSE')
  t.same(reads, [])
  t.throws(() => cap.takeDeferred(peer('10.0.0.1'), 'WebSocket'), { code: 'PLT_ERR_TOO_MANY_CONNECTIONS' })
  t.same(reads, ['10.0.0.1', '10.0.0.1', '10.0.0.1'], 'the two live ones and the new one read, once each')
  const b = cap.takeDeferred(peer('10.0.0.2'), 'WebSocket')
  t.same(reads.length, 4, 'at the maximum every new one is read')
  a1.release()
  a2.release()
  b.release()
  // one handed another socket (the upgrade's response gives way to the open WebSocket) is read from that
  const c = cap.takeDeferred(peer('10.0.0.3'), 'WebSocket')
  c.readFrom(peer('10.0.0.5'))
  cap.takeDeferred(peer('10.0.0.5'), 'WebSocket')
  t.equal(cap.held('10.0.0.5', 'WebSocket'), 2, 'the socket handed over is the one read')
  t.equal(cap.held('10.0.0.1', 'WebSocket'), 0, 'released places are given back')
  t.end()
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

t.test(
  'behind a trusted proxy each client it forwards has its own places, and no client picks its address',
  async (t) => {
    // nginx on this host is 127.0.0.1; 127.0.0.2 plays a client that reaches the node directly
    const tp = await startTestPlatform(
      { 'platform.transport.rooms.max-members-per-address': 2, 'platform.server.trusted-proxies': ['127.0.0.1/32'] },
      { install: (p) => p.use(transportArea) }
    )
    t.teardown(tp.close)
    const held: (() => void)[] = []
    t.teardown(() => {
      for (const close of held) close()
    })
    const url = wsUrl(tp.url, '/platform/rooms/lobby?presence=false')
    const viaProxy = (forwardedFor: string) => ({ 'x-forwarded-for': forwardedFor })
    const hold = async (from: string, headers: Record<string, string>) => {
      const ws = await wsFrom(url, from, headers)
      held.push(() => ws.terminate())
    }

    // the attack: one client behind the proxy takes every place it may hold...
    await hold('127.0.0.1', viaProxy('203.0.113.1'))
    await hold('127.0.0.1', viaProxy('203.0.113.1'))
    t.equal((await refusedUpgrade(url, viaProxy('203.0.113.1'))).status, 429, 'its third member is refused')
    // ...and no more: every other client of the same proxy still joins, on every transport
    await hold('127.0.0.1', viaProxy('203.0.113.2'))
    for (let i = 0; i < 2; i++) {
      const s = await sseMember(tp.url, 'lobby', '?presence=false', viaProxy('203.0.113.1'))
      held.push(s.abort)
    }
    const sse = await fetch(tp.url + '/platform/rooms/lobby', {
      headers: { accept: 'text/event-stream', ...viaProxy('203.0.113.1') }
    })
    t.equal(sse.status, 429, 'SSE: the full client is refused')
    await sse.body?.cancel()
    const other = await sseMember(tp.url, 'lobby', '?presence=false', viaProxy('203.0.113.2'))
    held.push(other.abort)

    // the proxy appends the address it saw: a left-most entry is the client's claim, not its address
    const spoofed = await refusedUpgrade(url, viaProxy('198.51.100.7, 203.0.113.1'))
    t.equal(spoofed.status, 429, 'claiming another address through the proxy changes nothing')

    // a client that is not a trusted proxy is counted by its own address, whatever it claims
    await hold('127.0.0.2', viaProxy('198.51.100.1'))
    await hold('127.0.0.2', viaProxy('198.51.100.2'))
    const direct = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { localAddress: '127.0.0.2', headers: viaProxy('198.51.100.3') })
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0)
        res.resume()
      })
      ws.once('open', () => {
        ws.terminate()
        resolve(101)
      })
      ws.on('error', () => {})
    })
    t.equal(direct, 429, 'a direct client naming a third address is still refused')
  }
)
