import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startMcp, addFixtures, modern } from '../mcp/helpers.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { getMcp } from '../../runtime/mcp/index.js'
import { installMcp } from '../../runtime/mcp/install.js'
import { entryCount } from '../helpers/entry-count.js'
import { initialize, onSession } from './mcp-clients.js'

// Hostile-client corpus: what one MCP session may store is capped (client
// capabilities and info, subscriptions and their URIs), and a subscribe writes only itself.

const blob = (bytes: number): string => 'x'.repeat(bytes)

t.test('initialize with oversized capabilities or clientInfo is refused and stores nothing', async (t) => {
  const m = await startMcp({}, { fixtures: false })
  t.teardown(m.tp.close)
  const db = m.tp.platform.store.db('mcp-sessions')
  const caps = await initialize(m.url, {
    params: { protocolVersion: '2025-11-25', capabilities: { experimental: { junk: blob(200_000) } } }
  })
  t.equal(caps.sid, undefined, 'no session')
  t.equal(caps.body.error.code, -32602)
  t.match(caps.body.error.message, /capabilities.*limit is 8192 bytes.*platform\.mcp\.sessions\.max-capabilities-bytes/)
  t.same(caps.body.error.data, { limitBytes: 8192, key: 'platform.mcp.sessions.max-capabilities-bytes' })
  const info = await initialize(m.url, {
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: blob(10_000), version: '1' } }
  })
  t.equal(info.sid, undefined)
  t.equal(info.body.error.code, -32602)
  t.match(info.body.error.message, /clientInfo.*limit is 4096 bytes.*platform\.mcp\.sessions\.max-client-info-bytes/)
  t.equal(m.mcp.core.sessions.size, 0, 'nothing counted')
  t.equal(entryCount(db), 0, 'nothing written')
  const ok = await initialize(m.url)
  t.equal(ok.status, 200, 'an ordinary client still gets in')
})

t.test('the limits are configurable', async (t) => {
  const m = await startMcp(
    { 'platform.mcp.sessions.max-capabilities-bytes': 300_000, 'platform.mcp.sessions.max-client-info-bytes': 64 },
    { fixtures: false }
  )
  t.teardown(m.tp.close)
  const big = { experimental: { junk: blob(200_000) } }
  t.equal((await initialize(m.url, { params: { capabilities: big } })).status, 200)
  const info = await initialize(m.url, { params: { capabilities: {}, clientInfo: { name: blob(100), version: '1' } } })
  t.same(info.body.error.data, { limitBytes: 64, key: 'platform.mcp.sessions.max-client-info-bytes' })
})

t.test('subscriptions: only resources that exist, URIs of bounded length, a bounded count', async (t) => {
  const m = await startMcp({
    'platform.mcp.sessions.max-subscriptions': 3,
    'platform.mcp.sessions.max-uri-bytes': 64
  })
  t.teardown(m.tp.close)
  const sid = (await initialize(m.url)).sid!
  const unknown = await onSession(m.url, sid, 'resources/subscribe', { uri: 'test://nowhere/' + blob(30) })
  t.equal(unknown.body.error.code, -32002, 'Resource not found (the session dialect code)')
  t.same(unknown.body.error.data, { uri: 'test://nowhere/' + blob(30) })
  const long = await onSession(m.url, sid, 'resources/subscribe', { uri: 'test://template/' + blob(80) + '/data' })
  t.equal(long.body.error.code, -32602)
  t.same(long.body.error.data, { limitBytes: 64, key: 'platform.mcp.sessions.max-uri-bytes' })
  for (const uri of ['test://watched-resource', 'test://static-text', 'test://template/1/data'])
    t.same((await onSession(m.url, sid, 'resources/subscribe', { uri })).body.result, {}, uri)
  t.same(
    (await onSession(m.url, sid, 'resources/subscribe', { uri: 'test://static-text' })).body.result,
    {},
    'subscribing again to a subscribed URI takes no room'
  )
  const over = await onSession(m.url, sid, 'resources/subscribe', { uri: 'test://template/2/data' })
  t.equal(over.body.error.code, -32000)
  t.same(over.body.error.data, { limit: 3, key: 'platform.mcp.sessions.max-subscriptions' })
  t.same((await onSession(m.url, sid, 'resources/unsubscribe', { uri: 'test://static-text' })).body.result, {})
  t.same(
    (await onSession(m.url, sid, 'resources/subscribe', { uri: 'test://template/2/data' })).body.result,
    {},
    'an unsubscribe makes room'
  )
  t.same([...m.mcp.core.sessions.get(sid)!.subscriptions].sort(), [
    'test://template/1/data',
    'test://template/2/data',
    'test://watched-resource'
  ])
})

t.test('a subscribe writes its URI alone, not the session record; subscriptions survive a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-subs-'))
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true })
  })
  const start = async (): Promise<{ url: string; tp: TestPlatform }> => {
    const tp = await startTestPlatform(
      { 'platform.data-dir': dataDir },
      {
        install: async (p) => {
          await installMcp(p)
          await addFixtures(p)
        }
      }
    )
    return { url: `${tp.url}/platform/mcp`, tp }
  }
  const a = await start()
  const sid = (await initialize(a.url)).sid!
  const db = a.tp.platform.store.db('mcp-sessions')
  let recordWrites = 0
  const put = db.put.bind(db)
  db.put = ((...args: Parameters<typeof put>) => {
    recordWrites++
    return put(...args)
  }) as typeof db.put
  for (let i = 0; i < 20; i++)
    t.same((await onSession(a.url, sid, 'resources/subscribe', { uri: `test://template/${i}/data` })).body.result, {})
  t.equal(recordWrites, 0, 'the session record was not rewritten per subscribe')
  await a.tp.close()
  const b = await start()
  t.teardown(b.tp.close)
  t.equal((await onSession(b.url, sid, 'ping')).status, 200, 'the session is restored')
  t.equal(getMcp(b.tp.platform)!.core.sessions.get(sid)?.subscriptions.size, 20, 'with its subscriptions')
})

t.test('a 2026-07-28 listen stream holds no more resource URIs than a session may', async (t) => {
  const m = await startMcp({ 'platform.mcp.sessions.max-subscriptions': 3, 'platform.mcp.sessions.max-uri-bytes': 64 })
  t.teardown(m.tp.close)
  const many = await modern(m.url, 'subscriptions/listen', {
    notifications: { resourceSubscriptions: ['a', 'b', 'c', 'd'].map((x) => `test://template/${x}/data`) }
  })
  t.equal(many.body.error.code, -32602)
  t.same(many.body.error.data, { limit: 3, key: 'platform.mcp.sessions.max-subscriptions' })
  const long = await modern(m.url, 'subscriptions/listen', {
    notifications: { resourceSubscriptions: [`test://template/${blob(80)}/data`] }
  })
  t.equal(long.body.error.code, -32602)
  t.same(long.body.error.data, { limitBytes: 64, key: 'platform.mcp.sessions.max-uri-bytes' })
})
