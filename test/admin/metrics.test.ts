// /api/admin/metrics: broadcast latency, the long-polling cache, backpressure and AI turn counters
// come from prom-client metrics registered where the events happen, and move with real traffic.
import t from 'tap'
import { adminPlatform, call, ALICE, WRITER } from './helpers.js'
import { wsMember } from '../transport/clients.js'
import { AI } from '../../runtime/ai/index.js'
import { Histogram, Registry } from 'prom-client'
import { TimedMetric } from '../../runtime/observability/index.js'

const tp = await adminPlatform({ ...WRITER, 'platform.interactions.http-write-enabled': true })
t.teardown(tp.close)
const ROOM = '/platform/rooms/metrics'

t.test('the shape names every part of the reference the platform can measure', async (t) => {
  const m = (await call(tp, 'GET', '/metrics')).body
  t.same(Object.keys(m), [
    'connections',
    'messages',
    'broadcastLatency',
    'activeBroadcasters',
    'rooms',
    'cache',
    'backpressure',
    'ai'
  ])
  t.same(Object.keys(m.cache), ['size', 'added', 'delivered', 'dropped'])
  t.same(Object.keys(m.broadcastLatency), ['count', 'meanMs', 'maxMs', 'totalTimeMs'])
  t.same(Object.keys(m.backpressure), ['drops', 'disconnects'])
  t.same(Object.keys(m.ai), [
    'activeSessions',
    'promptsTotal',
    'streamingTextsTotal',
    'errorsTotal',
    'toolCallsTotal',
    'turnLatency'
  ])
})

t.test('a broadcast to a real WebSocket member is timed', async (t) => {
  const ws = await wsMember(tp.url, 'metrics')
  t.teardown(() => ws.ws.close())
  const before = (await call(tp, 'GET', '/metrics')).body.broadcastLatency
  for (let i = 0; i < 3; i++) {
    const sent = await call(tp, 'POST', '/broadcasters/broadcast', {
      token: ALICE,
      body: { broadcasterId: ROOM, message: { n: i } }
    })
    t.equal(sent.status, 200)
  }
  await ws.inbox.next((f) => f.n === 2)
  const after = (await call(tp, 'GET', '/metrics')).body.broadcastLatency
  t.ok(after.count >= before.count + 3, `${before.count} → ${after.count} broadcasts timed`)
  t.ok(after.totalTimeMs >= before.totalTimeMs)
  t.ok(after.maxMs >= after.meanMs, 'the maximum is at least the mean')
  t.ok(after.maxMs > 0 || after.totalTimeMs === 0)

  const all = (await call(tp, 'GET', '/metrics/all')).body as any[]
  const row = all.find((r) => r.name === 'platform_broadcast_seconds')
  t.same(Object.keys(row), ['name', 'type', 'description', 'count', 'meanMs', 'maxMs', 'totalTimeMs'])
  t.equal(row.count, after.count)
  t.equal(row.maxMs, after.maxMs)
})

t.test('AI turns are counted: prompts, streamed texts, errors, latency', async (t) => {
  const before = (await call(tp, 'GET', '/metrics')).body.ai
  const made = await fetch(tp.url + '/api/interactions', {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Hello metrics' })
  })
  t.equal(made.status, 200)
  const interaction = (await made.json()) as { status: string }
  t.equal(interaction.status, 'COMPLETED')
  const mid = (await call(tp, 'GET', '/metrics')).body.ai
  t.equal(mid.promptsTotal, before.promptsTotal + 1, 'one turn started')
  t.ok(mid.streamingTextsTotal > before.streamingTextsTotal, 'its text was streamed')
  t.equal(mid.errorsTotal, before.errorsTotal, 'no error')
  t.equal(mid.turnLatency.count, before.turnLatency.count + 1, 'and timed')
  t.ok(mid.turnLatency.maxMs >= mid.turnLatency.meanMs)

  // a turn for an agent nobody contributes ends with an error event (run by the AI service itself:
  // the interactions route refuses an unknown agent before any turn)
  const events = []
  for await (const e of tp.platform.area(AI).runTurn({ message: 'Hello', agent: 'nobody-has-this-agent' }))
    events.push(e.type)
  t.same(events, ['error'])
  const after = (await call(tp, 'GET', '/metrics')).body.ai
  t.equal(after.promptsTotal, mid.promptsTotal + 1)
  t.equal(after.errorsTotal, mid.errorsTotal + 1, 'the failed turn is an error')
  const all = (await call(tp, 'GET', '/metrics/all')).body as any[]
  t.ok(all.some((r) => r.name === 'platform_ai_errors_total' && r.tags?.code === 'unknown-agent'))
})

t.test(
  'the long-polling cache: messages held between polls, collected by the next poll, dropped at the cap or on leaving',
  async (t) => {
    const lp = await adminPlatform({ ...WRITER, 'platform.transport.long-polling-queue': 5 })
    t.teardown(lp.close)
    const cache = async () => (await call(lp, 'GET', '/metrics')).body.cache
    const broadcast = async (room: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await call(lp, 'POST', '/broadcasters/broadcast', {
          token: ALICE,
          body: { broadcasterId: `/platform/rooms/${room}`, message: { n: i } }
        })
        t.equal(r.status, 200)
      }
    }
    /** Joins without polling: the join answer carries the joined frame, nothing is held for it. */
    const join = async (room: string) => {
      const url = `${lp.url}/platform/rooms/${room}?transport=long-polling`
      const j = (await (await fetch(url)).json()) as { uuid: string; token: string; messages: any[] }
      t.same(
        j.messages.map((m) => m.type),
        ['joined']
      )
      return {
        ...j,
        poll: async () => {
          const r = await fetch(`${url}&uuid=${j.uuid}&token=${j.token}`)
          return ((await r.json()) as { messages: any[] }).messages
        }
      }
    }
    t.same(await cache(), { size: 0, added: 0, delivered: 0, dropped: 0 })

    // a client that misses three messages between polls; they wait for it, then its poll collects them
    const a = await join('lp-a')
    t.same(await cache(), { size: 0, added: 0, delivered: 0, dropped: 0 }, 'the join answer is no cache')
    await broadcast('lp-a', 3)
    t.same(await cache(), { size: 3, added: 3, delivered: 0, dropped: 0 })
    t.same(
      (await a.poll()).map((m) => m.n),
      [0, 1, 2]
    )
    t.same(await cache(), { size: 0, added: 3, delivered: 3, dropped: 0 })

    // a message that finds a poll waiting is answered at once: never held
    const held = a.poll()
    await new Promise((r) => setTimeout(r, 50))
    await broadcast('lp-a', 1)
    t.same(
      (await held).map((m) => m.n),
      [0]
    )
    t.same(await cache(), { size: 0, added: 3, delivered: 3, dropped: 0 })

    // past the queue cap (5) the client is disconnected and what it held is dropped
    const b = await join('lp-b')
    await broadcast('lp-b', 6)
    t.same(await cache(), { size: 0, added: 9, delivered: 3, dropped: 6 })
    t.equal(
      (await fetch(`${lp.url}/platform/rooms/lp-b?transport=long-polling&uuid=${b.uuid}&token=${b.token}`)).status,
      404
    )

    // a client that leaves with messages held drops them too
    const c = await join('lp-c')
    await broadcast('lp-c', 2)
    t.same(await cache(), { size: 2, added: 11, delivered: 3, dropped: 6 })
    const left = await fetch(`${lp.url}/platform/rooms/lp-c`, {
      method: 'DELETE',
      headers: { 'x-platform-resource': c.uuid, 'x-platform-token': c.token }
    })
    t.equal(left.status < 300, true)
    t.same(await cache(), { size: 0, added: 11, delivered: 3, dropped: 8 })

    const rows = ((await call(lp, 'GET', '/metrics/all')).body as any[]).filter((r) =>
      String(r.name).startsWith('platform_long_polling_cache')
    )
    t.same(
      rows.map((r) => [r.name, r.tags ?? null, r.value]),
      [
        ['platform_long_polling_cached_messages', null, 0],
        ['platform_long_polling_cache_added_total', null, 11],
        ['platform_long_polling_cache_delivered_total', null, 3],
        ['platform_long_polling_cache_dropped_total', { reason: 'overflow' }, 6],
        ['platform_long_polling_cache_dropped_total', { reason: 'closed' }, 2]
      ],
      'the same counters, from the registry'
    )
    const text = await (await fetch(`${lp.url}/metrics`)).text()
    t.match(text, /platform_long_polling_cached_messages 0/)
  }
)

t.test('a timed metric hands prom-client the buckets, sum and count a histogram fed each value has', async (t) => {
  const buckets = [0.001, 0.01, 0.1, 1]
  const values = [0.0005, 0.001, 0.002, 0.01, 0.05, 0.1, 0.5, 1, 2, 30, 0]
  const lazy = new Registry()
  const plain = new Registry()
  const timed = new TimedMetric(lazy, 'x_seconds', 'x', buckets)
  const histogram = new Histogram({ name: 'x_seconds', help: 'x', buckets, registers: [plain] })
  const feed = (vs: number[]): void => {
    for (const v of vs) {
      timed.observe(v)
      histogram.observe(v)
    }
  }
  const histogramOf = async (r: Registry): Promise<string> =>
    (await r.metrics())
      .split('\n')
      .filter((l) => l.startsWith('x_seconds_') && !l.startsWith('x_seconds_max'))
      .join('\n')
  feed(values)
  t.equal(await histogramOf(lazy), await histogramOf(plain))
  // read twice with nothing new: nothing counted twice
  t.equal(await histogramOf(lazy), await histogramOf(plain))
  t.match(await lazy.metrics(), /x_seconds_max 30/)
  // a reset drops what was handed over; what comes after is counted from zero
  lazy.resetMetrics()
  plain.resetMetrics()
  feed([0.003, 5])
  t.equal(await histogramOf(lazy), await histogramOf(plain))
  t.match(await histogramOf(lazy), /x_seconds_count 2/)
})
