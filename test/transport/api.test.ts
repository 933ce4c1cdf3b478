import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { TRANSPORT } from '../../runtime/transport/key.js'
import { transportOf, type Transport } from '../../runtime/transport/index.js'
import { roomBroadcasterId } from '../../runtime/transport/rooms.js'
import { PlatformError } from '../../runtime/contracts/index.js'
import { TRANSPORT_ERRORS } from '../../runtime/transport/errors.js'
import type { PlatformEvent } from '../../runtime/events/index.js'
import { wsMember, sseMember, lpMember } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

const tp = await startTestPlatform({}, { install: (p) => p.use(transportArea) })
t.teardown(tp.close)
const base = tp.url
const events: PlatformEvent[] = []
tp.platform.bus.on('*', (e) => {
  events.push(e)
})
const tr: Transport = transportOf(tp.platform)

function metric(text: string, name: string, labels = ''): number {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(name + labels + ' ') || (labels === '' && l.startsWith(name + ' ')))
  return line === undefined ? NaN : Number(line.split(' ').pop())
}

async function until(fn: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (fn()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('timed out waiting for ' + what)
}

t.test('the transport is reachable from the platform', async (t) => {
  t.equal(tp.platform.area(TRANSPORT), tr)
})

t.test('broadcaster get-or-create, list and destroy, with bus events', async (t) => {
  events.length = 0
  const b = tr.broadcaster('/news')
  t.equal(tr.broadcaster('/news'), b, 'get returns the same broadcaster')
  t.same(
    tr.listBroadcasters().find((x) => x.id === '/news'),
    { id: '/news', className: 'Broadcaster', resourceCount: 0, isDestroyed: false }
  )
  t.same(
    events.filter((e) => e.type === 'BroadcasterCreated').map((e) => (e as any).id),
    ['/news']
  )
  t.equal(tr.broadcast('/news', 'nobody listens'), 0)
  t.ok(tr.destroyBroadcaster('/news'))
  t.notOk(tr.destroyBroadcaster('/news'), 'destroying twice is false')
  t.equal(
    tr.listBroadcasters().find((x) => x.id === '/news'),
    undefined
  )
  t.match(
    events.find((e) => e.type === 'BroadcasterDestroyed'),
    { id: '/news' }
  )
  t.throws(() => tr.broadcast('/nope', 'x'), new PlatformError(TRANSPORT_ERRORS.UNKNOWN_BROADCASTER, { id: '/nope' }))
})

t.test('broadcast reaches members on all three transports, JSON built once', async (t) => {
  events.length = 0
  const before = await tp.platform.metrics.text()
  const a = await wsMember(base, 'ops')
  const b = await sseMember(base, 'ops')
  const c = await lpMember(base, 'ops')
  const id = roomBroadcasterId('ops')
  t.same(
    tr.listBroadcasters().find((x) => x.id === id),
    { id, className: 'RoomBroadcaster', resourceCount: 3, isDestroyed: false }
  )
  const rows = tr.listResources(id)
  t.equal(rows.length, 3)
  t.same(
    rows.find((r) => r.uuid === a.uuid),
    { uuid: a.uuid, transport: 'WEBSOCKET', isSuspended: true, isResumed: false, broadcaster: id }
  )
  t.same(
    rows.find((r) => r.uuid === b.uuid),
    { uuid: b.uuid, transport: 'SSE', isSuspended: true, isResumed: false, broadcaster: id }
  )
  t.equal(rows.find((r) => r.uuid === c.uuid)?.transport, 'LONG_POLLING')
  const connected = events.filter((e) => e.type === 'ResourceConnected') as any[]
  t.same(
    connected.map((e) => [e.uuid, e.transport, e.broadcaster]),
    [
      [a.uuid, 'WEBSOCKET', id],
      [b.uuid, 'SSE', id],
      [c.uuid, 'LONG_POLLING', id]
    ]
  )

  const m1 = await tp.platform.metrics.text()
  t.equal(
    metric(m1, 'platform_open_connections', '{transport="websocket"}') -
      metric(before, 'platform_open_connections', '{transport="websocket"}'),
    1
  )
  t.equal(
    metric(m1, 'platform_open_connections', '{transport="sse"}') -
      metric(before, 'platform_open_connections', '{transport="sse"}'),
    1
  )
  t.equal(
    metric(m1, 'platform_open_connections', '{transport="long-polling"}') -
      metric(before, 'platform_open_connections', '{transport="long-polling"}'),
    1
  )

  events.length = 0
  t.equal(tr.broadcast(id, { alert: 'disk full' }), 3)
  for (const m of [a, b, c]) t.same(await m.inbox.next((f) => f.alert !== undefined), { alert: 'disk full' })
  t.equal(tr.broadcast(id, 'raw text'), 3)
  t.same(await a.inbox.next((f) => f.raw !== undefined), { raw: 'raw text' }, 'a string goes out as is')
  t.same(await b.inbox.next((f) => f.raw !== undefined), { raw: 'raw text' })
  t.equal(
    await c.inbox.next((f) => typeof f === ('string' as unknown)),
    'raw text',
    'long-polling carries it as a JSON string'
  )
  t.same(
    events
      .filter((e) => e.type === 'MessageBroadcast')
      .map((e) => [(e as any).broadcasterId, (e as any).resourceCount]),
    [
      [id, 3],
      [id, 3]
    ]
  )

  t.ok(tr.unicast(b.uuid, { only: 'b' }))
  t.same(await b.inbox.next((f) => f.only !== undefined), { only: 'b' })
  t.notOk(tr.unicast('no-such-uuid', 'x'))

  const m2 = await tp.platform.metrics.text()
  t.ok(metric(m2, 'platform_broadcasts_total', '{broadcaster="rooms"}') >= 2, 'rooms share one label')
  t.ok(metric(m2, 'platform_broadcast_deliveries_total') >= 6)

  events.length = 0
  // disconnect by uuid, one per transport
  t.ok(tr.disconnect(a.uuid))
  t.same(await a.closed, { code: 1000, reason: 'disconnected' })
  t.ok(tr.disconnect(b.uuid))
  t.same(await b.inbox.type('disconnected'), { type: 'disconnected', reason: 'disconnected' })
  await b.ended
  t.ok(tr.disconnect(c.uuid))
  t.notOk(tr.disconnect(c.uuid), 'unknown uuid: false')
  t.ok([200, 404].includes(await c.stopped), 'the poll loop ends')
  const gone = events.filter((e) => e.type === 'ResourceDisconnected') as any[]
  t.same(
    gone.map((e) => [e.uuid, e.reason]),
    [
      [a.uuid, 'disconnected'],
      [b.uuid, 'disconnected'],
      [c.uuid, 'disconnected']
    ]
  )
  t.equal(tr.listResources(id).length, 0)
  await until(() => tr.findBroadcaster(id) === undefined, 'empty room destroyed')
  t.ok(events.some((e) => e.type === 'BroadcasterDestroyed' && (e as any).id === id))
  const m3 = await tp.platform.metrics.text()
  for (const x of ['websocket', 'sse', 'long-polling'])
    t.equal(
      metric(m3, 'platform_open_connections', `{transport="${x}"}`),
      metric(before, 'platform_open_connections', `{transport="${x}"}`),
      x + ' gauge back'
    )
})

t.test('destroying a broadcaster disconnects its members', async (t) => {
  const a = await wsMember(base, 'doomed')
  const b = await sseMember(base, 'doomed')
  t.ok(tr.destroyBroadcaster(roomBroadcasterId('doomed')))
  t.same(await a.closed, { code: 1000, reason: 'broadcaster destroyed' })
  t.same(await b.inbox.type('disconnected'), { type: 'disconnected', reason: 'broadcaster destroyed' })
  t.equal(a.inbox.all.filter((f) => f.type === 'member-left').length, 0, 'no leave storm while destroying')
})
