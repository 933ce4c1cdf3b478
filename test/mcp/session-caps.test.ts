import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startMcp, openSession, ACCEPT_BOTH } from './helpers.js'
import { wsClient } from './extras-helpers.js'
import { startTestPlatform } from '../helpers/platform.js'
import { installMcp } from '../../runtime/mcp/install.js'
import { addressBucket } from '../../runtime/http/address-bucket.js'

const TOKEN = 'bob-token-0123456789'
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }
}

async function initialize(
  url: string,
  headers: Record<string, string> = {}
): Promise<{ status: number; sid: string | null; body: any }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(INIT)
  })
  return { status: r.status, sid: r.headers.get('mcp-session-id'), body: await r.json() }
}

async function ping(url: string, sid: string): Promise<number> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })
  })
  await r.text()
  return r.status
}

t.test(
  'one anonymous client stops at the per-address cap (defaults), and gets room back when it ends a session',
  async (t) => {
    const m = await startMcp({}, { fixtures: false })
    t.teardown(m.tp.close)
    const sids: string[] = []
    for (let i = 0; i < 32; i++) {
      const r = await initialize(m.url)
      t.equal(r.status, 200)
      sids.push(r.sid!)
    }
    const over = await initialize(m.url)
    t.equal(over.status, 429)
    t.equal(over.sid, null, 'no session was created')
    t.equal(over.body.id, 1)
    t.equal(over.body.error.code, -32000)
    t.match(
      over.body.error.message,
      /^Too many sessions for anonymous clients at \S+: the limit is 32 live sessions \(platform\.mcp\.sessions\.max-per-address\)/
    )
    t.same(over.body.error.data, { limit: 32, key: 'platform.mcp.sessions.max-per-address' })
    t.equal(m.mcp.core.sessions.size, 32, 'the refusal changed nothing')
    const del = await fetch(m.url, { method: 'DELETE', headers: { 'mcp-session-id': sids[0]! } })
    t.equal(del.status, 204)
    t.equal((await initialize(m.url)).status, 200, 'a DELETE makes room')
    t.equal(await ping(m.url, sids[1]!), 200, 'the earlier sessions still work')
  }
)

t.test('per-principal cap; a principal is not counted against its address, over HTTP and WebSocket', async (t) => {
  const m = await startMcp(
    {
      'platform.auth.tokens': [{ token: TOKEN, principal: 'bob' }],
      'platform.mcp.sessions.max-per-principal': 2,
      'platform.mcp.sessions.max-per-address': 2
    },
    { fixtures: false }
  )
  t.teardown(m.tp.close)
  const bob = { authorization: `Bearer ${TOKEN}` }
  t.equal((await initialize(m.url, bob)).status, 200)
  t.equal((await initialize(m.url, bob)).status, 200)
  const over = await initialize(m.url, bob)
  t.equal(over.status, 429)
  t.equal(
    over.body.error.message,
    "Too many sessions for principal 'bob': the limit is 2 live sessions (platform.mcp.sessions.max-per-principal); end one with DELETE or let it idle out"
  )
  const ws = await wsClient(m.url, bob)
  t.teardown(() => {
    ws.ws.close()
  })
  const wsOver = await ws.rpc(INIT)
  t.equal(wsOver.error.code, -32000)
  t.match(wsOver.error.message, /principal 'bob'.*max-per-principal/, 'the same limit on WebSocket')
  t.equal((await initialize(m.url)).status, 200, 'anonymous sessions from the same address have their own count')
  const anonWs = await wsClient(m.url)
  t.teardown(() => {
    anonWs.ws.close()
  })
  t.ok((await anonWs.rpc(INIT)).result, 'a WebSocket session counts against the address too')
  const anonOver = await initialize(m.url)
  t.equal(anonOver.status, 429)
  t.match(anonOver.body.error.message, /anonymous clients at .*limit is 2/)
})

t.test(
  'at the server-wide cap the least recently seen idle anonymous session makes room; busy ones stay',
  async (t) => {
    const m = await startMcp(
      { 'platform.auth.tokens': [{ token: TOKEN, principal: 'bob' }], 'platform.mcp.max-sessions': 3 },
      { fixtures: false }
    )
    t.teardown(m.tp.close)
    const bob = { authorization: `Bearer ${TOKEN}` }
    const busy = await openSession(m.url)
    const ac = new AbortController()
    t.teardown(() => {
      ac.abort()
    })
    const stream = await fetch(m.url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': busy.sid },
      signal: ac.signal
    })
    t.equal(stream.status, 200, 'the busy session has its notification stream open')
    const older = await openSession(m.url)
    const newer = await openSession(m.url)
    t.equal(await ping(m.url, newer.sid), 200, 'newer was seen last')
    t.equal((await initialize(m.url, bob)).status, 200, 'bob gets in at the cap')
    t.equal(await ping(m.url, older.sid), 404, 'the least recently seen idle anonymous session was ended')
    t.equal(await ping(m.url, busy.sid), 200, 'the session with an open stream stays')
    t.equal((await initialize(m.url, bob)).status, 200)
    t.equal(await ping(m.url, newer.sid), 404)
    const full = await initialize(m.url, bob)
    t.equal(full.status, 503, 'nothing idle and anonymous is left')
    t.equal(
      full.body.error.message,
      'Too many sessions: the server holds its limit of 3 live sessions (platform.mcp.max-sessions)'
    )
    t.equal(await ping(m.url, busy.sid), 200)
    t.equal(m.mcp.core.sessions.size, 3)
  }
)

t.test('the counts survive a restart (sessions are restored from LMDB)', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-caps-'))
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true })
  })
  const start = async (): Promise<{ url: string; close: () => Promise<void> }> => {
    const tp = await startTestPlatform(
      { 'platform.data-dir': dataDir, 'platform.mcp.sessions.max-per-address': 2 },
      {
        install: async (p) => {
          await installMcp(p)
        }
      }
    )
    return { url: `${tp.url}/platform/mcp`, close: tp.close }
  }
  const a = await start()
  const first = await initialize(a.url)
  t.equal(first.status, 200)
  t.equal((await initialize(a.url)).status, 200)
  await a.close()
  const b = await start()
  t.teardown(b.close)
  t.equal((await initialize(b.url)).status, 429, 'the restored sessions still count against the address')
  t.equal((await fetch(b.url, { method: 'DELETE', headers: { 'mcp-session-id': first.sid! } })).status, 204)
  t.equal((await initialize(b.url)).status, 200)
})

t.test('anonymous callers are counted by IPv4 address, IPv4-mapped as IPv4, IPv6 by /64', async (t) => {
  t.equal(addressBucket('127.0.0.1'), '127.0.0.1')
  t.equal(
    addressBucket('0000:0000:0000:0000:0000:ffff:7f00:0001'),
    '127.0.0.1',
    'uWS reports IPv4 on a dual-stack socket like this'
  )
  t.equal(addressBucket('2001:0db8:0001:0002:0000:0000:0000:0001'), '2001:db8:1:2::/64')
  t.equal(addressBucket('2001:db8:1:2:ffff:1:2:3'), '2001:db8:1:2::/64', 'another address of the same /64')
  t.equal(addressBucket('2001:db8:1:3::1'), '2001:db8:1:3::/64')
  t.equal(addressBucket('::1'), '0:0:0:0::/64')
  t.equal(addressBucket('not:an::address::'), 'not:an::address::', 'anything unparsable is its own bucket')
})

t.test('over IPv6 loopback the limit names the /64', async (t) => {
  const m = await startMcp(
    { 'platform.server.host': '::1', 'platform.mcp.sessions.max-per-address': 1 },
    { fixtures: false }
  )
  t.teardown(m.tp.close)
  const url = m.url.replace('//::1:', '//[::1]:')
  t.equal((await initialize(url)).status, 200)
  const over = await initialize(url)
  t.equal(over.status, 429)
  t.match(over.body.error.message, /anonymous clients at 0:0:0:0::\/64: the limit is 1 live sessions/)
})
