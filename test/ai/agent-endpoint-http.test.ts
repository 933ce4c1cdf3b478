import t from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { agentSocket, deltas, eventually, lpAgent, postTurn, sseAgent, untilTerminal } from './agent-clients.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const PATH = '/platform/agent/demo'
const PLUGINS = { 'platform.plugins.dirs': [join(REPO, 'plugins')] }

const tp = await startTestPlatform(PLUGINS, { install: installAreas })
t.teardown(tp.close)
const ai = tp.platform.area(AI)

t.test('SSE: POST a message, the reply streams back as SSE on the response', async (t) => {
  const r = await postTurn(tp.url, PATH, 'What is a sandbox?')
  t.equal(r.status, 200)
  const f = r.frames
  t.match(
    f.find((x) => x.event === 'tool-start'),
    { data: { toolName: 'platform_fact' } }
  )
  t.match(f.at(-1), { event: 'complete', data: { summary: /isolate/, usage: { model: 'demo-1' } } })
  t.same(
    f.map((x) => x.seq),
    f.map((_, i) => i + 1)
  )
  t.ok(f.every((x) => x.sessionId === f[0]!.sessionId))
  await eventually(() => ai.sessions.activeCount() === 0 && ai.inFlight() === 0, 5000, 'one-shot session ended')
})

t.test('SSE: a JSON envelope POST works too; bad bodies get 400 and start nothing', async (t) => {
  const r = await postTurn(tp.url, PATH, JSON.stringify({ message: 'Hello envelope' }), {
    'content-type': 'application/json'
  })
  t.match(r.frames.at(-1), { event: 'complete', data: { summary: /Hello envelope/ } })
  for (const bad of ['{"nope": true}', '{"type":"cancel"}', '']) {
    const b = await postTurn(tp.url, PATH, bad)
    t.equal(b.status, 400, bad)
    t.match(JSON.parse(b.body), { code: 'PLT_ERR_INVALID_BODY' })
  }
  t.equal(ai.sessions.activeCount(), 0)
})

t.test('SSE: the transport join (GET) then POSTs as the member; frames arrive on the stream', async (t) => {
  const m = await sseAgent(tp.url, PATH)
  t.teardown(m.stop)
  t.match(m.session, { key: 'session', value: { agent: 'demo' } })
  t.equal(ai.sessions.get(m.session.sessionId)?.transport, 'sse')
  t.equal(await m.send('first over sse'), 200)
  const a = await untilTerminal(m.inbox)
  t.match(deltas(a), /first over sse/)
  t.equal(await m.send('{"message": "second over sse"}'), 200)
  const b = await untilTerminal(m.inbox)
  t.match(b.at(-1), { event: 'complete', data: { summary: /second over sse/ } })
  t.equal(await m.send('{"type":"cancel"}'), 200)
  t.match(await m.inbox.next(), { event: 'error', data: { code: 'no-turn' } })
})

t.test('long-polling: join, POST, poll the frames', async (t) => {
  const m = await lpAgent(tp.url, PATH)
  t.teardown(m.stop)
  t.equal(ai.sessions.get(m.session.sessionId)?.transport, 'long-polling')
  t.equal(await m.send('What is a sandbox?'), 200)
  const f = await untilTerminal(m.inbox)
  t.match(
    f.find((x) => x.event === 'tool-result'),
    { data: { result: /isolate/ } }
  )
  t.match(f.at(-1), { event: 'complete' })
})

t.test('an unknown agent is a 404 on every HTTP transport', async (t) => {
  const path = '/platform/agent/nobody'
  const post = await postTurn(tp.url, path, 'hi')
  t.equal(post.status, 404)
  t.match(JSON.parse(post.body), { code: 'PLT_ERR_AGENT_NOT_FOUND' })
  const sse = await fetch(tp.url + path)
  t.equal(sse.status, 404)
  t.match(await sse.json(), { code: 'PLT_ERR_AGENT_NOT_FOUND' })
  const lp = await fetch(tp.url + path + '?transport=long-polling')
  t.equal(lp.status, 404)
  await lp.arrayBuffer()
})

t.test('message size: over platform.ai.endpoint.max-message-bytes is 413 on POST, 1009 on WebSocket', async (t) => {
  const big = 'x'.repeat(70_000)
  const post = await postTurn(tp.url, PATH, big)
  t.equal(post.status, 413)
  const s = await agentSocket(tp.url, PATH)
  s.ws.send(big)
  t.match(await s.closed, { code: 1009 })
  // 10 MB: far beyond what uWS reads, the connection is dropped; nothing stays behind
  const s2 = await agentSocket(tp.url, PATH)
  s2.ws.send('y'.repeat(10 * 1024 * 1024))
  const closed = await s2.closed
  t.ok(closed.code === 1009 || closed.code === 1006, `closed with ${closed.code}`)
  await eventually(() => ai.sessions.activeCount() === 0 && ai.inFlight() === 0, 5000, 'sessions gone')
  t.equal(tp.platform.area(AI).inFlight(), 0)
})

// regression: the bytes were decoded lossily, so a binary frame that is not UTF-8 reached the
// model (and memory) as replacement characters
t.test('a frame or body that is not UTF-8 text is refused: 1007 on WebSocket, 400 on POST', async (t) => {
  const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x41])
  const s = await agentSocket(tp.url, PATH)
  s.ws.send(bytes, { binary: true })
  const open = new Promise((resolve) => setTimeout(() => resolve({ code: 'still open' }), 5000))
  t.match(await Promise.race([s.closed, open]), { code: 1007 })
  s.ws.terminate()
  t.notOk(
    s.inbox.all.some((f) => f.event === 'text-delta'),
    'no turn ran'
  )
  // UTF-8 in a binary frame is text like any other
  const ok = await agentSocket(tp.url, PATH)
  t.teardown(() => ok.ws.close())
  ok.ws.send(Buffer.from('héllo binary'), { binary: true })
  t.match((await untilTerminal(ok.inbox)).at(-1), { event: 'complete', data: { summary: /héllo binary/ } })

  const oneShot = await fetch(tp.url + PATH, { method: 'POST', body: bytes })
  t.equal(oneShot.status, 400)
  t.match(await oneShot.json(), { code: 'PLT_ERR_INVALID_BODY', error: /not UTF-8 text/ })
  const m = await lpAgent(tp.url, PATH)
  t.teardown(m.stop)
  const member = await fetch(tp.url + PATH, {
    method: 'POST',
    body: bytes,
    headers: { 'x-platform-resource': m.uuid, 'x-platform-token': m.token }
  })
  t.equal(member.status, 400)
  t.match(await member.json(), { code: 'PLT_ERR_INVALID_BODY' })
  t.equal(ai.inFlight(), 0, 'no turn started')
})

t.test('platform.ai.endpoint.auth=required: a principal or 401, on every transport', async (t) => {
  const token = 'agent-endpoint-test-token'
  const p = await startTestPlatform(
    { ...PLUGINS, 'platform.ai.endpoint.auth': 'required', 'platform.auth.tokens': [{ token, principal: 'alice' }] },
    { install: installAreas }
  )
  t.teardown(p.close)
  const post = await postTurn(p.url, PATH, 'hi')
  t.equal(post.status, 401)
  t.match(JSON.parse(post.body), { code: 'PLT_ERR_AGENT_AUTH_REQUIRED' })
  t.equal((await fetch(p.url + PATH)).status, 401)
  const ws = await agentSocket(p.url, PATH).catch((e: unknown) => e)
  t.ok(ws instanceof Error, 'the WebSocket upgrade is refused')
  const auth = { authorization: `Bearer ${token}` }
  const ok = await postTurn(p.url, PATH, 'hi there', auth)
  t.match(ok.frames.at(-1), { event: 'complete' })
  const s = await agentSocket(p.url, PATH, auth)
  t.teardown(() => s.ws.close())
  t.match((await s.turn('hello')).at(-1), { event: 'complete' })
  // a browser's WebSocket cannot set a header: the token may ride in the query, and a wrong one is no principal
  const q = await agentSocket(p.url, `${PATH}?access_token=${token}`)
  t.teardown(() => q.ws.close())
  t.match((await q.turn('hello')).at(-1), { event: 'complete' })
  const wrong = await agentSocket(p.url, `${PATH}?access_token=not-${token}`).catch((e: unknown) => e)
  t.ok(wrong instanceof Error, 'an unknown token in the query is refused like none')
  t.equal((await postTurn(p.url, `${PATH}?access_token=${token}`, 'hi')).status, 200, 'on a POST too')
})

t.test(
  'message rate: over platform.ai.endpoint.max-messages-per-second is 1008 on WebSocket, 429 on POST',
  async (t) => {
    const p = await startTestPlatform(
      {
        ...PLUGINS,
        'platform.ai.endpoint.max-messages-per-second': 1,
        'platform.ai.endpoint.message-burst': 2
      },
      { install: installAreas }
    )
    t.teardown(p.close)
    const s = await agentSocket(p.url, PATH)
    for (let i = 0; i < 3; i++) s.ws.send('{"type":"cancel"}')
    t.match(await s.closed, { code: 1008 })
    const m = await sseAgent(p.url, PATH)
    t.teardown(m.stop)
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push(await m.send('{"type":"cancel"}'))
    t.same(statuses, [200, 200, 429])
    await eventually(() => p.platform.area(AI).inFlight() === 0)
  }
)

t.test("idle agent connections get the transport's heartbeats: SSE comments and WebSocket pings", async (t) => {
  const p = await startTestPlatform(
    { ...PLUGINS, 'platform.transport.heartbeat-seconds': 1 },
    { install: installAreas }
  )
  t.teardown(p.close)
  const m = await sseAgent(p.url, PATH)
  t.teardown(m.stop)
  const s = await agentSocket(p.url, PATH)
  t.teardown(() => s.ws.close())
  let pinged = false
  s.ws.on('ping', () => {
    pinged = true
  })
  // uWS pings at about half its idle timeout, which is at least 8 s
  await eventually(() => pinged && m.comments.some((c) => c.includes('heartbeat')), 9000, 'heartbeats')
  t.ok(pinged, 'the socket was pinged')
  t.ok(m.comments.length > 0, 'the SSE stream carried heartbeat comments')
})
