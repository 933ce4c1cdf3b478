import t from 'tap'
import { OriginPolicy } from '../../runtime/http/origin-policy.js'
import { refusedUpgrade, wsMember, wsUrl } from '../transport/clients.js'
import { agentSocket } from '../ai/agent-clients.js'
import { startDemoPlatform } from './demo-platform.js'

// Hostile-client corpus: a foreign web page driving the platform's browser-reachable endpoints
// with its visitor's network position (cross-site WebSocket hijacking, DNS rebinding). One rule,
// platform.server.allowed-origins, answers for MCP, rooms, agents, AG-UI, A2A and interactions.

const EVIL = { origin: 'https://evil.example' }
const FRIEND = 'https://app.example'
const AGENT = '/platform/agent/demo'

const tp = await startDemoPlatform({
  'platform.server.allowed-origins': [FRIEND],
  'platform.interactions.http-write-enabled': true,
  'platform.interactions.demo-principal': 'demo-user'
})
t.teardown(tp.close)

async function status(path: string, init: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(tp.url + path, init)
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, body }
}

t.test('the rule itself: no Origin, listed, loopback and IP same-origin pass; names must be listed', async (t) => {
  const p = new OriginPolicy([FRIEND])
  t.ok(p.allowed(undefined, 'anything'), 'no Origin: a non-browser client')
  t.ok(p.allowed(FRIEND, 'platform.example'), 'listed')
  t.ok(p.allowed('http://localhost:5173', 'localhost:8080'), 'loopback')
  t.ok(p.allowed('http://10.0.0.5:8080', '10.0.0.5:8080'), 'same-origin on an IP address')
  t.notOk(p.allowed('http://10.0.0.5:8080', '10.0.0.6:8080'), 'another IP address')
  t.notOk(p.allowed('http://evil.example:8080', 'evil.example:8080'), 'a DNS-rebinding page looks same-origin')
  t.notOk(p.allowed('null', 'localhost:8080'), 'an opaque origin')
  t.notOk(p.allowed('https://evil.example', undefined))
  t.ok(new OriginPolicy(['*']).allowed('https://evil.example', undefined), '* admits any')
})

t.test('rooms: a foreign Origin is refused 403 on WebSocket, SSE, long-polling and POST', async (t) => {
  const ws = await refusedUpgrade(wsUrl(tp.url, '/platform/rooms/lobby'), EVIL)
  t.equal(ws.status, 403)
  t.match(ws.body, { code: 'PLT_ERR_ORIGIN_FORBIDDEN', error: /evil\.example/, hint: /allowed-origins/ })
  const sse = await status('/platform/rooms/lobby', { headers: { accept: 'text/event-stream', ...EVIL } })
  t.equal(sse.status, 403)
  t.match(sse.body, { code: 'PLT_ERR_ORIGIN_FORBIDDEN' })
  t.equal((await status('/platform/rooms/lobby?transport=long-polling', { headers: EVIL })).status, 403)
  t.equal((await status('/platform/rooms/lobby', { method: 'POST', body: '{}', headers: EVIL })).status, 403)
  const listed = await wsMember(tp.url, 'lobby', '', { origin: FRIEND })
  t.ok(listed.uuid, 'a listed origin joins')
  listed.ws.close()
  const local = await wsMember(tp.url, 'lobby', '', { origin: tp.url })
  t.ok(local.uuid, 'the loopback origin the server runs on joins')
  local.ws.close()
})

t.test('agents: WebSocket, SSE, POST and AG-UI refuse a foreign Origin', async (t) => {
  t.equal((await refusedUpgrade(wsUrl(tp.url, AGENT), EVIL)).status, 403)
  t.equal((await status(AGENT, { headers: { accept: 'text/event-stream', ...EVIL } })).status, 403)
  const post = await status(AGENT, { method: 'POST', body: 'hello', headers: EVIL })
  t.equal(post.status, 403)
  t.match(post.body, { code: 'PLT_ERR_ORIGIN_FORBIDDEN' })
  const agui = await status(`${AGENT}/agui`, {
    method: 'POST',
    body: JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'm', role: 'user', content: 'hi' }] }),
    headers: { 'content-type': 'application/json', ...EVIL }
  })
  t.equal(agui.status, 403)
  const s = await agentSocket(tp.url, AGENT, { origin: FRIEND })
  t.ok(s.session, 'a listed origin talks to the agent')
  s.ws.close()
})

t.test('A2A and interactions refuse a foreign Origin; MCP reads the same rule', async (t) => {
  const a2a = await status(`${AGENT}/a2a`, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} }),
    headers: { 'content-type': 'application/json', ...EVIL }
  })
  t.equal(a2a.status, 403)
  const created = await status('/api/interactions', {
    method: 'POST',
    body: JSON.stringify({ agent: 'demo', input: 'hi' }),
    headers: { 'content-type': 'application/json', ...EVIL }
  })
  t.equal(created.status, 403)
  t.match(created.body, { code: 'PLT_ERR_ORIGIN_FORBIDDEN' })
  t.equal((await status('/api/interactions', { headers: EVIL })).status, 403)
  const stream = await refusedUpgrade(wsUrl(tp.url, '/platform/interactions-stream?id=int-x'), EVIL)
  t.equal(stream.status, 403)
  const mcp = (origin: string): Promise<{ status: number }> =>
    status('/platform/mcp', {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin }
    })
  t.equal((await mcp(EVIL.origin)).status, 403, 'MCP refuses the foreign origin')
  t.not((await mcp(FRIEND)).status, 403, 'and admits the one listed in platform.server.allowed-origins')
})
