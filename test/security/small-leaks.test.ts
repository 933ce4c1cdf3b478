import t from 'tap'
import { transportOf } from '../../runtime/transport/index.js'
import { floodStalledSse, refusedUpgrade, wsMember, wsUrl } from '../transport/clients.js'
import { startDemoPlatform } from './demo-platform.js'

// Hostile-client corpus: small leaks a client could use. A slow SSE consumer closed without a
// trace in the metrics, room members' principals readable by anyone, and a WebSocket upgrade to
// an agent that does not exist accepted before it errors.

const TOKEN = 'ops-token-0123456789abcdef'
const tp = await startDemoPlatform({
  'platform.transport.max-backpressure-bytes': 64 * 1024,
  'platform.auth.tokens': [{ token: TOKEN, principal: 'ops', roles: [] }]
})
t.teardown(tp.close)
const tr = transportOf(tp.platform)

async function slowClosed(): Promise<number> {
  const m = /^platform_slow_consumers_closed_total (\d+)/m.exec(await tp.platform.metrics.text())
  return Number(m?.[1] ?? 0)
}

t.test('an SSE consumer closed for not reading is counted in platform_slow_consumers_closed_total', async (t) => {
  const before = await slowClosed()
  const { reason, sent, abort } = await floodStalledSse(tp.platform, tp.url, 'hose')
  t.teardown(abort)
  t.equal(reason, 'slow consumer', `closed after ${sent} broadcasts`)
  t.equal(await slowClosed(), before + 1, 'counted once')
})

t.test('room member principals are a content read: anonymous callers get 401', async (t) => {
  const member = await wsMember(tp.url, 'ops-room', '', { authorization: `Bearer ${TOKEN}` })
  t.teardown(() => member.ws.close())
  const anon = await fetch(tp.url + '/api/admin/rooms')
  t.equal(anon.status, 401)
  t.match(await anon.json(), { code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED' })
  const read = await fetch(tp.url + '/api/admin/rooms', { headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(read.status, 200)
  const rooms = (await read.json()) as { room: string; members: { principal: string | null }[] }[]
  t.same(
    rooms.find((r) => r.room === 'ops-room')?.members.map((m) => m.principal),
    ['ops'],
    'a principal sees who is in the room'
  )
})

t.test('a WebSocket upgrade to an unknown agent is refused 404, like a POST', async (t) => {
  const ws = await refusedUpgrade(wsUrl(tp.url, '/platform/agent/nobody'))
  t.equal(ws.status, 404)
  t.match(ws.body, { code: 'PLT_ERR_AGENT_NOT_FOUND' })
  const post = await fetch(tp.url + '/platform/agent/nobody', { method: 'POST', body: 'hi' })
  t.equal(post.status, 404)
  await post.arrayBuffer()
  t.equal(tr.findBroadcaster('agent:/platform/agent/nobody'), undefined, 'nothing was opened')
})
