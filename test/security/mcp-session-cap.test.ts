import t from 'tap'
import type WebSocket from 'ws'
import { startMcp } from '../mcp/helpers.js'
import { INIT, initialize, wsFrom, closeWs } from './mcp-clients.js'

// Hostile-client corpus: anonymous sessions at the cap cannot lock out
// authenticated principals, cost no scan per create, and deep JSON over WebSocket counts nothing.

const ALICE = { authorization: 'Bearer alice-token-0123456789' }
const TOKENS = { 'platform.auth.tokens': [{ token: 'alice-token-0123456789', principal: 'alice' }] }

t.test('held anonymous WebSocket sessions cannot take the reserve kept for authenticated principals', async (t) => {
  const m = await startMcp(
    { ...TOKENS, 'platform.mcp.max-sessions': 20, 'platform.mcp.sessions.authenticated-reserve': 5 },
    { fixtures: false }
  )
  t.teardown(m.tp.close)
  const sockets: WebSocket[] = []
  t.teardown(async () => {
    for (const ws of sockets) await closeWs(ws)
  })
  const answers: any[] = []
  // 20 anonymous clients at 20 addresses, each holding its session open on its socket
  for (let i = 0; i < 20; i++) {
    const c = await wsFrom(m.url, { from: `127.0.2.${i + 1}` })
    sockets.push(c.ws)
    answers.push(await c.send(JSON.stringify(INIT)))
  }
  t.equal(answers.filter((a) => a.result !== undefined).length, 15, 'the anonymous pool is 20 - 5')
  const refused = answers.find((a) => a.error !== undefined)
  t.equal(refused.error.code, -32000)
  t.match(refused.error.message, /anonymous/)
  t.same(refused.error.data, { limit: 15, key: 'platform.mcp.sessions.authenticated-reserve' })
  const http = await initialize(m.url, { from: '127.0.2.99' })
  t.equal(http.status, 503, 'over HTTP too')
  for (let i = 0; i < 5; i++) t.equal((await initialize(m.url, { headers: ALICE })).status, 200, `alice ${i + 1}`)
  const full = await initialize(m.url, { headers: ALICE })
  t.equal(full.status, 503, 'at the server-wide cap with nothing idle to end')
  t.equal(m.mcp.core.sessions.size, 20)
})

t.test('at the cap a create ends an idle anonymous session without scanning the store', async (t) => {
  const m = await startMcp(
    { 'platform.mcp.max-sessions': 50, 'platform.mcp.sessions.authenticated-reserve': 10 },
    { fixtures: false }
  )
  t.teardown(m.tp.close)
  const from = (i: number): string => `127.0.3.${(i % 25) + 1}`
  for (let i = 0; i < 50; i++) t.ok((await initialize(m.url, { from: from(i) })).sid !== undefined || i >= 40)
  const db = m.tp.platform.store.db('mcp-sessions')
  let scans = 0
  let reads = 0
  const getRange = db.getRange.bind(db)
  const get = db.get.bind(db)
  db.getRange = ((...a: Parameters<typeof getRange>) => {
    scans++
    return getRange(...a)
  }) as typeof db.getRange
  db.get = ((...a: Parameters<typeof get>) => {
    reads++
    return get(...a)
  }) as typeof db.get
  t.teardown(() => {
    db.getRange = getRange
    db.get = get
  })
  for (let i = 0; i < 30; i++) t.equal((await initialize(m.url, { from: from(i) })).status, 200)
  t.equal(scans, 0, 'no scan of the session store per create')
  t.equal(reads, 0, 'no store read per create either')
  t.equal(m.mcp.core.sessions.size, 40, 'the anonymous pool stays at its size')
})

t.test('deep JSON over the MCP WebSocket is refused before a session is counted', async (t) => {
  const m = await startMcp({ 'platform.mcp.sessions.max-per-address': 2 }, { fixtures: false })
  t.teardown(m.tp.close)
  const deep = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`
  for (let i = 0; i < 4; i++) {
    const c = await wsFrom(m.url)
    const out = await c.send(deep)
    t.equal(out.error?.code, -32700, 'a parse error')
    t.match(out.error?.message, /depth|deep/i)
    await closeWs(c.ws)
  }
  t.equal(m.mcp.core.sessions.size, 0, 'no ghost session')
  const sockets = [await wsFrom(m.url), await wsFrom(m.url)]
  t.teardown(async () => {
    for (const c of sockets) await closeWs(c.ws)
  })
  for (const c of sockets) t.ok((await c.send(JSON.stringify(INIT))).result, 'the address still has its whole quota')
})
