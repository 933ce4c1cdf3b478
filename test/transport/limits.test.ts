import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportOf } from '../../runtime/transport/index.js'
import { roomBroadcasterId } from '../../runtime/transport/rooms.js'
import { floodStalledSse, wsMember, wsUrl } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

const LIMIT = 1024
const BACKPRESSURE = 64 * 1024
const tp = await startTestPlatform(
  {
    'platform.server.body-limit-bytes': LIMIT,
    'platform.transport.max-backpressure-bytes': BACKPRESSURE
  },
  { install: (p) => p.use(transportArea) }
)
t.teardown(tp.close)
const base = tp.url
const tr = transportOf(tp.platform)

/** Keeps GET /healthz going until stopped; returns every status seen. */
function requestStream(): { stop: () => Promise<number[]> } {
  const statuses: number[] = []
  let running = true
  const loop = (async () => {
    while (running) statuses.push((await fetch(base + '/healthz')).status)
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return statuses
    }
  }
}

t.test(
  'a frame over the limit is refused with 1009, far over it the connection is dropped; the server keeps serving',
  async (t) => {
    const stream = requestStream()
    const peer = await wsMember(base, 'big')
    const a = await wsMember(base, 'big')
    a.ws.send(JSON.stringify({ s: 'x'.repeat(LIMIT) }))
    t.same(await a.closed, { code: 1009, reason: 'message too big' })
    t.same((await peer.inbox.type('member-left', (f) => f.uuid === a.uuid)).reason, 'message too big')

    const b = await wsMember(base, 'big')
    b.ws.send(JSON.stringify({ s: 'x'.repeat(LIMIT * 10) }))
    const closed = await b.closed
    t.equal(closed.code, 1006, 'beyond twice the limit uWS drops the connection without reading the frame')
    t.same((await peer.inbox.type('member-left', (f) => f.uuid === b.uuid)).reason, 'message too big')

    const c = await wsMember(base, 'big')
    c.ws.send(JSON.stringify({ s: 'x'.repeat(LIMIT - 20) }))
    t.equal(
      (await peer.inbox.type('message', (f) => f.from === c.uuid)).data.s.length,
      LIMIT - 20,
      'a frame at the limit passes'
    )
    const statuses = await stream.stop()
    t.ok(statuses.length > 0)
    t.same([...new Set(statuses)], [200], 'every concurrent request succeeded')
    t.ok(tp.logs.some((l) => l.msg === 'closing WebSocket: frame over the limit (1009)'))
    peer.ws.close()
    c.ws.close()
    await Promise.all([peer.closed, c.closed])
  }
)

t.test('a WebSocket consumer that stops reading is closed with 1008 once it buffers past the limit', async (t) => {
  const fast = await wsMember(base, 'firehose')
  const slow = await wsMember(base, 'firehose')
  await fast.inbox.type('member-joined')
  // stop reading: the kernel buffers fill, then uWS buffers, then we must act
  ;(slow.ws as unknown as { _socket: { pause: () => void; resume: () => void } })._socket.pause()
  let gone = false
  const disconnected = new Promise<{ reason: string }>((resolve) => {
    const off = tp.platform.bus.on('ResourceDisconnected', (e) => {
      if (e.uuid === slow.uuid) {
        gone = true
        off()
        resolve(e)
      }
    })
  })
  const payload = { blob: 'y'.repeat(16 * 1024) }
  const id = roomBroadcasterId('firehose')
  let sent = 0
  while (!gone && sent < 5000) {
    tr.broadcast(id, payload)
    sent++
    await new Promise((r) => setImmediate(r))
  }
  t.equal((await disconnected).reason, 'slow consumer')
  t.ok(sent < 5000, `closed after ${sent} broadcasts`)
  ;(slow.ws as unknown as { _socket: { resume: () => void } })._socket.resume()
  t.same(
    await slow.closed,
    { code: 1008, reason: 'slow consumer' },
    'the client reads its backlog, then the close frame'
  )
  t.same((await fast.inbox.type('member-left', (f) => f.uuid === slow.uuid, 20000)).reason, 'slow consumer')
  t.equal(fast.ws.readyState, WebSocket.OPEN, 'the reading member is untouched')
  t.ok(
    tp.logs.some(
      (l) =>
        l.msg === 'closing slow WebSocket consumer (1008)' &&
        l.uuid === slow.uuid &&
        typeof l.bufferedAmount === 'number'
    )
  )
  const m = await tp.platform.metrics.text()
  t.match(m, /platform_slow_consumers_closed_total 1\b/)
  fast.ws.close()
  await fast.closed
})

t.test('an SSE consumer that stops reading is closed once its queue passes the limit', async (t) => {
  const { uuid, reason, sent, abort } = await floodStalledSse(tp.platform, base, 'sse-hose')
  t.equal(reason, 'slow consumer', `closed after ${sent} broadcasts`)
  t.ok(tp.logs.some((l) => l.msg === 'closed slow SSE consumer' && l.uuid === uuid))
  t.equal(tr.resource(uuid), undefined)
  abort()
})

t.test('an upgrade to an unknown WebSocket path is refused', async (t) => {
  const status = await new Promise<number>((resolve) => {
    const ws = new WebSocket(wsUrl(base, '/platform/nothing-here'))
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0)
      res.resume()
    })
    ws.on('open', () => {
      resolve(101)
      ws.close()
    })
    ws.on('error', () => {})
  })
  t.equal(status, 404)
})
