// Real WebSocket, SSE and long-polling clients in rooms, seen and driven through the admin routes.
import t from 'tap'
import { adminPlatform, call, ALICE, WRITER } from './helpers.js'
import { wsMember, sseMember, lpMember } from '../transport/clients.js'

const tp = await adminPlatform(WRITER)
t.teardown(tp.close)
const ROOM = '/platform/rooms/ops'

async function until(fn: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await fn()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('timed out waiting for ' + what)
}

t.test('members of every transport are listed, counted and reached', async (t) => {
  const ws = await wsMember(tp.url, 'ops')
  const sse = await sseMember(tp.url, 'ops')
  const lp = await lpMember(tp.url, 'ops', '&presence=false')
  t.teardown(() => {
    ws.ws.close()
    sse.abort()
    lp.stop()
  })

  const resources = (await call(tp, 'GET', '/resources')).body
  t.same(
    resources.map((r: any) => [r.uuid, r.transport, r.broadcaster]).sort(),
    [
      [ws.uuid, 'WEBSOCKET', ROOM],
      [sse.uuid, 'SSE', ROOM],
      [lp.uuid, 'LONG_POLLING', ROOM]
    ].sort()
  )
  t.same(
    Object.keys(resources[0]),
    ['uuid', 'transport', 'isSuspended', 'isResumed', 'broadcaster', 'node'],
    'emitted order'
  )
  t.equal(resources[0].node, tp.platform.node.id, 'the node it is connected to')

  const rooms = (await call(tp, 'GET', '/rooms', { token: ALICE })).body
  t.equal(rooms.length, 1)
  t.match(rooms[0], { room: 'ops', broadcaster: ROOM, memberCount: 3 })
  t.same(rooms[0].members.map((m: any) => [m.transport, m.silent]).sort(), [
    ['LONG_POLLING', true],
    ['SSE', false],
    ['WEBSOCKET', false]
  ])

  const list = (await call(tp, 'GET', '/broadcasters')).body
  t.same(list, [{ id: ROOM, className: 'RoomBroadcaster', resourceCount: 3, isDestroyed: false }])
  const detail = await call(tp, 'GET', '/broadcasters/detail?id=' + encodeURIComponent(ROOM))
  t.same(Object.keys(detail.body), ['id', 'className', 'resourceCount', 'isDestroyed', 'scope', 'resources'])
  t.equal(detail.body.resources.length, 3)
  t.same((await call(tp, 'GET', '/broadcasters/detail?id=nope')).body, {
    error: "Unknown broadcaster 'nope'",
    code: 'PLT_ERR_UNKNOWN_BROADCASTER'
  })

  const overview = (await call(tp, 'GET', '/overview')).body
  const handlers = (await call(tp, 'GET', '/handlers')).body as unknown[]
  t.ok(handlers.length >= 2, 'the rooms endpoint and the areas that serve streams')
  t.match(overview, { status: 'UP', connections: 3, broadcasters: 1, handlers: handlers.length })
  const metrics = (await call(tp, 'GET', '/metrics')).body
  t.match(metrics, { connections: { active: 3 }, activeBroadcasters: 1, rooms: { active: 1 } })
  t.ok(metrics.connections.total >= 3)

  // broadcast reaches all three
  const sent = await call(tp, 'POST', '/broadcasters/broadcast', {
    token: ALICE,
    body: { broadcasterId: ROOM, message: { alert: 'disk full' } }
  })
  t.same(sent.body, { status: 'broadcast sent' })
  for (const m of [ws, sse, lp]) t.same((await m.inbox.next((f) => f.alert !== undefined)).alert, 'disk full')

  // unicast reaches only the SSE member
  const uni = await call(tp, 'POST', '/broadcasters/unicast', {
    token: ALICE,
    body: { broadcasterId: ROOM, uuid: sse.uuid, message: 'just you' }
  })
  t.same(uni.body, { status: 'unicast sent' })
  t.same(await sse.inbox.next((f) => f.raw === 'just you'), { raw: 'just you' })
  const notMember = await call(tp, 'POST', '/broadcasters/unicast', {
    token: ALICE,
    body: { broadcasterId: ROOM, uuid: 'not-a-member', message: 'x' }
  })
  t.same(notMember.body, { error: "Unknown resource 'not-a-member'", code: 'PLT_ERR_UNKNOWN_RESOURCE' })
  await new Promise((r) => setTimeout(r, 50))
  t.notOk(
    [...ws.inbox.all, ...lp.inbox.all].some((f) => f.raw === 'just you'),
    'the others did not get the unicast'
  )
})

t.test('resume answers a held long-poll; a WebSocket is not resumable', async (t) => {
  const ws = await wsMember(tp.url, 'resume')
  const lp = await lpMember(tp.url, 'resume')
  t.teardown(() => {
    ws.ws.close()
    lp.stop()
  })
  await until(
    async () => (await call(tp, 'GET', '/resources')).body.some((r: any) => r.uuid === lp.uuid && r.isSuspended),
    'the poll to be held'
  )
  const r = await call(tp, 'POST', `/resources/${lp.uuid}/resume`, { token: ALICE })
  t.same(r.body, { status: 'resource resumed' })
  const no = await call(tp, 'POST', `/resources/${ws.uuid}/resume`, { token: ALICE })
  t.equal(no.status, 409)
  t.equal(no.body.code, 'PLT_ERR_RESOURCE_NOT_RESUMABLE')
  t.equal(no.body.error, `Resource '${ws.uuid}' is a WEBSOCKET connection; only a long-polling resource can be resumed`)
  const gone = await call(tp, 'POST', '/resources/nobody/resume', { token: ALICE })
  t.same(gone.body, { error: "Unknown resource 'nobody'", code: 'PLT_ERR_UNKNOWN_RESOURCE' })
  t.equal(
    (await call(tp, 'GET', '/resources')).body.filter((x: any) => x.broadcaster === '/platform/rooms/resume').length,
    2,
    'both still connected'
  )
})

t.test('disconnect closes each kind of client; destroy closes a whole room', async (t) => {
  const ws = await wsMember(tp.url, 'kick')
  const sse = await sseMember(tp.url, 'kick')
  const lp = await lpMember(tp.url, 'kick')
  // a held poll is answered with the disconnected frame (between polls the next poll gets 404):
  // the long-polling client goes first, before the others' departures answer its poll
  await until(
    async () => (await call(tp, 'GET', '/resources')).body.some((r: any) => r.uuid === lp.uuid && r.isSuspended),
    'the poll to be held'
  )
  for (const uuid of [lp.uuid, sse.uuid, ws.uuid]) {
    const r = await call(tp, 'DELETE', `/resources/${uuid}`, { token: ALICE })
    t.same(r.body, { status: 'resource disconnected' })
  }
  t.same(await ws.closed, { code: 1000, reason: 'disconnected' }, 'WebSocket closed by the server')
  t.same(await sse.inbox.type('disconnected'), { type: 'disconnected', reason: 'disconnected' })
  await sse.ended
  t.same(await lp.inbox.type('disconnected'), { type: 'disconnected', reason: 'disconnected' }, 'long-polling told')
  lp.stop()
  t.same((await call(tp, 'DELETE', `/resources/${ws.uuid}`, { token: ALICE })).status, 404, 'already gone')

  const a = await wsMember(tp.url, 'doomed')
  const b = await sseMember(tp.url, 'doomed')
  const d = await call(tp, 'DELETE', '/broadcasters/destroy?id=' + encodeURIComponent('/platform/rooms/doomed'), {
    token: ALICE
  })
  t.same(d.body, { status: 'broadcaster destroyed' })
  t.equal((await a.closed).code, 1000)
  await b.ended
  t.equal(
    (await call(tp, 'GET', '/broadcasters')).body.find((x: any) => x.id === '/platform/rooms/doomed'),
    undefined
  )
  const left = (await call(tp, 'GET', '/resources')).body as { broadcaster: string }[]
  t.notOk(
    left.some((r) => r.broadcaster.endsWith('/kick') || r.broadcaster.endsWith('/doomed')),
    'nobody of either room is left'
  )
  t.equal((await call(tp, 'GET', '/overview')).body.connections, left.length, 'the kept count matches the listing')
  const metrics = (await call(tp, 'GET', '/metrics')).body
  t.equal(metrics.connections.active, left.length)
  t.equal(metrics.connections.total - metrics.connections.disconnects, left.length, 'came minus left is what is here')
})
