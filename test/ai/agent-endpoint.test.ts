import t from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AI } from '../../runtime/ai/index.js'
import { TRANSPORT } from '../../runtime/transport/key.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { agentSocket, deltas, eventually, isTerminal } from './agent-clients.js'
import { refusedUpgrade, wsUrl } from '../transport/clients.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const PATH = '/platform/agent/demo'

const tp = await startTestPlatform({ 'platform.plugins.dirs': [join(REPO, 'plugins')] }, { install: installAreas })
t.teardown(tp.close)
const ai = tp.platform.area(AI)

t.test('WebSocket: a plain-text prompt streams text-delta frames, the model, then complete with usage', async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  t.match(s.session, { type: 'metadata', key: 'session', value: { agent: 'demo' }, seq: 1 })
  const sessionId = s.session!.sessionId as string
  t.equal(ai.sessions.get(sessionId)?.transport, 'websocket', 'the connection is an agent session')
  const frames = await s.turn('Hello there')
  t.ok(frames.length > 2)
  for (const f of frames) t.equal(f.sessionId, sessionId, 'every frame carries the session id')
  t.same(
    frames.map((f) => f.seq),
    frames.map((_, i) => i + 2),
    'seq is monotonic per session'
  )
  t.match(deltas(frames), /Hello there/, 'the demo runtime quotes the message')
  t.match(
    frames.find((f) => f.type === 'metadata'),
    { key: 'model', value: 'demo-1' }
  )
  const last = frames.at(-1)!
  t.match(last, { event: 'complete', data: { summary: deltas(frames), usage: { model: 'demo-1' } } })
  t.ok(last.data.usage.output > 0 && last.data.usage.total === last.data.usage.input + last.data.usage.output)
  t.equal(frames.filter(isTerminal).length, 1, 'exactly one terminal frame')
})

t.test('WebSocket: several turns on one socket, JSON envelopes and the demo tool call', async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  const a = await s.turn(JSON.stringify({ message: 'What is a sandbox?' }))
  t.match(
    a.find((f) => f.event === 'tool-start'),
    {
      data: { toolName: 'platform_fact', arguments: { topic: 'sandbox' } }
    }
  )
  t.match(
    a.find((f) => f.event === 'tool-result'),
    { data: { toolName: 'platform_fact', result: /isolate/ } }
  )
  t.ok(
    a.findIndex((f) => f.event === 'tool-start') < a.findIndex((f) => f.event === 'tool-result'),
    'tool-start before tool-result'
  )
  t.match(a.at(-1), { event: 'complete', data: { summary: /isolate/ } })
  const b = await s.turn('second turn')
  t.match(b.at(-1), { event: 'complete' })
  t.ok(b[0]!.seq > a.at(-1)!.seq, 'seq keeps rising across turns')
  t.equal(ai.sessions.get(s.session!.sessionId)?.messageCount, 2)
})

t.test('WebSocket: an unknown JSON shape gets an error frame and changes nothing', async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  for (const bad of ['{"hello": 1}', '[1, 2]', '{"message": 42}', '{"message": "x", "extra": true}', '   ']) {
    s.ws.send(bad)
    const f = await s.inbox.next()
    t.match(
      f,
      { event: 'error', data: { code: /bad-frame|empty/, recoverable: true }, sessionId: s.session!.sessionId },
      bad
    )
  }
  t.equal(ai.inFlight(), 0, 'no turn started')
  // braces that are not JSON are prose: a prompt
  const frames = await s.turn('{not json} is fine')
  t.match(frames.at(-1), { event: 'complete', data: { summary: /not json/ } })
})

t.test('WebSocket: an upgrade to an unknown agent is refused with 404 before upgrading; no session', async (t) => {
  let started = 0
  const off = tp.platform.bus.on('AgentSessionStarted', () => started++)
  t.teardown(off)
  const r = await refusedUpgrade(wsUrl(tp.url, '/platform/agent/nobody'))
  t.equal(r.status, 404)
  t.match(r.body, { code: 'PLT_ERR_AGENT_NOT_FOUND', error: /nobody/ })
  t.equal(started, 0, 'no session started')
  t.equal(tp.platform.area(TRANSPORT).findBroadcaster('agent:/platform/agent/nobody'), undefined, 'no member made')
})

t.test('sessions end with the connection, announced on the bus with duration and message count', async (t) => {
  const ended: Record<string, unknown>[] = []
  const off = tp.platform.bus.on('AgentSessionEnded', (e) => ended.push(e))
  t.teardown(off)
  const s = await agentSocket(tp.url, PATH)
  await s.turn('one')
  s.ws.close()
  await eventually(() => ended.length === 1, 5000, 'AgentSessionEnded')
  t.match(ended[0], { agentName: 'demo', sessionId: s.session!.sessionId, messageCount: 1 })
  t.ok((ended[0]!.duration as number) >= 0)
  await eventually(() => ai.sessions.activeCount('demo') === 0, 5000, 'no demo session left')
})

t.test('1 000 turns started and abandoned: sessions, in-flight turns and resources return to zero', async (t) => {
  const resources = tp.platform.area(TRANSPORT).resourceCount
  const prompt = 'talk '.repeat(2000)
  const started = ai.sessions.activeCount()
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        const s = await agentSocket(tp.url, PATH)
        s.ws.send(prompt)
        await s.inbox.next((f) => f.event === 'text-delta')
        s.ws.terminate()
        await s.closed
      })
    )
  }
  await eventually(() => ai.inFlight() === 0, 10_000, 'in-flight turns back to 0')
  await eventually(() => ai.sessions.activeCount() === started, 10_000, 'sessions back')
  t.equal(tp.platform.area(TRANSPORT).resourceCount, resources, 'no resource left')
  t.equal(tp.platform.area(TRANSPORT).findBroadcaster('agent:' + PATH), undefined, 'the empty room is gone')
})
