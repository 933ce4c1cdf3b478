import t from 'tap'
import { startMcp } from '../mcp/helpers.js'
import { PRINCIPAL_SOURCES } from '../../runtime/auth/index.js'
import { INIT, call, initialize, onSession, wsFrom, closeWs } from './mcp-clients.js'

// Hostile-client corpus: an MCP session belongs to the principal that opened it
// (an anonymous one to its creator's address); anyone else holding its Mcp-Session-Id gets 404.

const ALICE = { authorization: 'Bearer alice-token-0123456789' }
const BOB = { authorization: 'Bearer bob-token-0123456789' }
const TOKENS = {
  'platform.auth.tokens': [
    { token: 'alice-token-0123456789', principal: 'alice' },
    { token: 'bob-token-0123456789', principal: 'bob' }
  ]
}

t.test("another principal cannot use, stream or delete alice's session", async (t) => {
  const m = await startMcp(TOKENS, { fixtures: false })
  t.teardown(m.tp.close)
  const init = await initialize(m.url, { headers: ALICE })
  t.equal(init.status, 200)
  const sid = init.sid!
  const asBob = await onSession(m.url, sid, 'tools/list', {}, { headers: BOB })
  t.equal(asBob.status, 404, 'bob cannot list tools on it')
  t.equal(asBob.body.error.code, -32001)
  t.equal(asBob.body.error.message, 'Session not found', 'the answer says no more than for an unknown id')
  t.equal((await call(m.url, { method: 'GET', sid, headers: { ...BOB, accept: 'text/event-stream' } })).status, 404)
  t.equal((await call(m.url, { method: 'DELETE', sid, headers: BOB })).status, 404, 'bob cannot delete it')
  t.equal((await onSession(m.url, sid, 'tools/list')).status, 404, 'an anonymous caller at the same address neither')
  t.equal((await call(m.url, { method: 'DELETE', sid })).status, 404)
  const mine = await onSession(m.url, sid, 'tools/list', {}, { headers: ALICE })
  t.equal(mine.status, 200, 'alice still has her session')
  t.ok(Array.isArray(mine.body.result.tools))
  t.equal((await call(m.url, { method: 'DELETE', sid, headers: ALICE })).status, 204, 'alice ends it')
})

t.test("an anonymous session is bound to its creator's address", async (t) => {
  // 127.0.0.1 is a trusted proxy (nginx on this host): it names its clients; 127.0.0.2 and .3 do not
  const m = await startMcp(
    { ...TOKENS, 'platform.server.trusted-proxies': ['127.0.0.1/32'], 'platform.mcp.sessions.max-per-address': 1 },
    { fixtures: false }
  )
  t.teardown(m.tp.close)
  const init = await initialize(m.url, { from: '127.0.0.2' })
  t.equal(init.status, 200)
  const sid = init.sid!
  t.equal((await onSession(m.url, sid, 'tools/list', {}, { from: '127.0.0.3' })).status, 404, 'another address')
  t.equal((await onSession(m.url, sid, 'tools/list', {}, { headers: BOB, from: '127.0.0.2' })).status, 404, 'bob')
  t.equal(
    (await call(m.url, { method: 'GET', sid, from: '127.0.0.3', headers: { accept: 'text/event-stream' } })).status,
    404
  )
  t.equal((await call(m.url, { method: 'DELETE', sid, from: '127.0.0.3' })).status, 404)
  t.equal((await onSession(m.url, sid, 'ping', {}, { from: '127.0.0.2' })).status, 200, 'its creator still can')
  t.equal(
    (await onSession(m.url, sid, 'tools/list', {}, { from: '127.0.0.3', headers: { 'x-forwarded-for': '127.0.0.2' } }))
      .status,
    404,
    'a client that is not a proxy cannot claim the address'
  )
  t.equal(m.mcp.core.sessions.size, 1, 'nothing was ended')
  t.equal((await call(m.url, { method: 'DELETE', sid, from: '127.0.0.2' })).status, 204)

  // behind the proxy: each client it names has its own sessions and its own per-address budget
  const viaProxy = (client: string) => ({ headers: { 'x-forwarded-for': client } })
  const a = await initialize(m.url, viaProxy('203.0.113.1'))
  t.equal(a.status, 200)
  t.equal((await initialize(m.url, viaProxy('203.0.113.1'))).status, 429, 'one session per address')
  t.equal((await initialize(m.url, viaProxy('203.0.113.2'))).status, 200, "another client's budget is its own")
  t.equal((await onSession(m.url, a.sid!, 'ping', {}, viaProxy('203.0.113.2'))).status, 404, "not the other's session")
  t.equal((await onSession(m.url, a.sid!, 'ping', {}, viaProxy('198.51.100.9, 203.0.113.1'))).status, 200, 'its own')
  // over WebSocket the address is read at the upgrade: a third client's socket opens its own session
  const c = await wsFrom(m.url, viaProxy('203.0.113.3'))
  t.teardown(async () => {
    await closeWs(c.ws)
  })
  t.ok((await c.send(JSON.stringify(INIT))).result, 'a session on the socket')
  const d = await wsFrom(m.url, viaProxy('203.0.113.3'))
  t.teardown(async () => {
    await closeWs(d.ws)
  })
  t.equal((await d.send(JSON.stringify(INIT))).error?.code, -32000, 'the same client again: over its budget')
})

t.test('a session opened on a WebSocket answers only to the principal that opened it', async (t) => {
  let who: string | null = 'alice'
  const m = await startMcp(TOKENS, {
    fixtures: false,
    // a token source whose answer changes, like a JWT that expires mid-connection
    extend: (p) =>
      p.extend(PRINCIPAL_SOURCES, (h) =>
        h['x-platform-auth'] === 'rotating' && who !== null ? { name: who, roles: [], via: 'validator' } : null
      )
  })
  t.teardown(m.tp.close)
  const c = await wsFrom(m.url, { headers: { 'x-platform-auth': 'rotating' } })
  t.teardown(async () => {
    await closeWs(c.ws)
  })
  const init = await c.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }))
  t.ok(init.result, 'alice opened a session on the socket')
  t.ok((await c.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }))).result)
  who = 'bob'
  // the socket's credentials are judged again at most a second apart
  await new Promise((r) => setTimeout(r, 1100))
  const asBob = await c.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }))
  t.equal(asBob.error?.code, -32001, 'the same socket, now bob, no longer reaches the session')
})
