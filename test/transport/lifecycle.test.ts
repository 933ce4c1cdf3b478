import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportOf } from '../../runtime/transport/index.js'
import { wsMember, sseMember, lpMember, wsUrl } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

// heartbeat 4 s: uWS idleTimeout 8 s, so a ping after about 4 s of silence and a close at 8 s without a pong
const tp = await startTestPlatform(
  { 'platform.transport.heartbeat-seconds': 4, 'platform.transport.long-polling-timeout-seconds': 30 },
  { install: (p) => p.use(transportArea) }
)
t.teardown(tp.close)
const base = tp.url

t.test('heartbeats: WebSocket pings, a silent peer is closed, SSE gets comments', async (t) => {
  const live = await wsMember(base, 'beat')
  const pinged = new Promise<void>((resolve) => {
    live.ws.once('ping', () => {
      resolve()
    })
  })
  const sse = await sseMember(base, 'beat')
  // a peer that never answers pings
  const mute = new WebSocket(wsUrl(base, '/platform/rooms/beat'), { autoPong: false })
  const muteClosed = new Promise<number>((resolve) => {
    mute.on('close', (code) => {
      resolve(code)
    })
  })
  const muteUuid = await new Promise<string>((resolve) => {
    mute.once('message', (d) => {
      resolve(JSON.parse(String(d)).uuid)
    })
  })
  await pinged
  t.pass('the server pinged an idle WebSocket')
  const left = await sse.inbox.type('member-left', (f) => f.uuid === muteUuid, 20000)
  t.equal(left.reason, 'timeout', 'a peer that never pongs is dropped')
  t.equal(await muteClosed, 1006)
  t.ok(sse.comments.includes('heartbeat'), 'SSE heartbeat comments arrive')
  t.equal(live.ws.readyState, WebSocket.OPEN, 'a ponging peer stays')
  live.ws.close()
  sse.abort()
  await Promise.all([live.closed, sse.ended])
})

t.test('graceful shutdown: WebSockets get 1001, SSE and held polls a disconnected frame', async (t) => {
  const tp2 = await startTestPlatform({}, { install: (p) => p.use(transportArea) })
  const a = await wsMember(tp2.url, 'bye')
  const b = await sseMember(tp2.url, 'bye')
  const c = await lpMember(tp2.url, 'bye')
  const reasons: string[] = []
  tp2.platform.bus.on('ResourceDisconnected', (e) => {
    reasons.push(e.reason)
  })
  // wait until the long-poll is held
  const tr2 = transportOf(tp2.platform)
  for (let i = 0; i < 400 && tr2.listResources().find((r) => r.uuid === c.uuid)?.isSuspended !== true; i++)
    await new Promise((r) => setTimeout(r, 10))
  t.equal(tr2.listResources().find((r) => r.uuid === c.uuid)?.isSuspended, true, 'the poll is held')
  await tp2.close()
  t.same(await a.closed, { code: 1001, reason: 'server shutting down' })
  t.same(await b.inbox.type('disconnected'), { type: 'disconnected', reason: 'server shutting down' })
  await b.ended
  t.equal(await c.stopped, 200)
  t.same(await c.inbox.type('disconnected'), { type: 'disconnected', reason: 'server shutting down' })
  t.same(reasons, ['server shutting down', 'server shutting down', 'server shutting down'])
  t.equal(a.inbox.all.filter((f) => f.type === 'member-left').length, 0, 'no leave storm on shutdown')
  t.equal(tr2.resourceCount, 0)
})
