// /api/admin/metrics: broadcast latency, backpressure and AI turn counters
// come from prom-client metrics registered where the events happen, and move with real traffic.
import t from 'tap'
import { adminPlatform, call, ALICE, WRITER } from './helpers.js'
import { wsMember } from '../transport/clients.js'
import { AI } from '../../runtime/ai/index.js'

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
    'backpressure',
    'ai'
  ])
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
