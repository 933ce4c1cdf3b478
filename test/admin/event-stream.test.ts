// The admin event stream over real sockets: every event type from a real action, replay and
// resume by seq, the replay bound, heartbeats, slow consumers, authentication, enabled=false.
import type { Test } from 'tap'
import t from 'tap'
import { connect } from 'node:net'
import { adminPlatform, call, ALICE, BOB, WRITER } from './helpers.js'
import { wsMember, type Frame, type WsMember } from '../transport/clients.js'
import { openSession } from '../mcp/helpers.js'
import { AI } from '../../runtime/ai/index.js'
import { getMcp } from '../../runtime/mcp/index.js'
import { wsEvents, sseEvents, reach, EVENTS } from './event-clients.js'
import { postTurn } from '../ai/agent-clients.js'
import { fileURLToPath } from 'node:url'

const auth = { authorization: `Bearer ${ALICE}` }
// room members speak fast here: the per-member rate limit is not what these tests are about
const FAST = {
  ...WRITER,
  'platform.transport.rooms.max-messages-per-second': 100_000,
  'platform.transport.rooms.message-burst': 100_000
}

/** A room message from a WebSocket member: every member, the sender included, gets it. */
function speak(m: WsMember, data: unknown): void {
  m.ws.send(JSON.stringify(data))
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** Checks `events` are numbered 1 apart with no gap, each `{type, ...fields, timestamp, seq}`. */
function contiguous(t: Test, events: Frame[], what: string): void {
  for (let i = 1; i < events.length; i++)
    if (events[i]!.seq !== events[i - 1]!.seq + 1) {
      t.fail(`${what}: seq ${events[i - 1]!.seq} then ${events[i]!.seq}`)
      return
    }
  t.pass(`${what}: ${events.length} events, contiguous`)
}

t.test('every event type reaches WebSocket and SSE subscribers from a real action', async (t) => {
  // the bundled plugins: the demo-fleet coordinator 'panel' dispatches to 'demo' and 'critic'
  const tp = await adminPlatform({
    ...FAST,
    'platform.plugins.dirs': [fileURLToPath(new URL('../../plugins', import.meta.url))]
  })
  t.teardown(tp.close)
  const ws = await wsEvents(tp.url, '', auth)
  const sse = await sseEvents(tp.url, '', auth)
  t.teardown(() => {
    ws.close()
    sse.close()
  })

  // a room member joins and speaks: the room's broadcaster, the resource, the message
  const member = await wsMember(tp.url, 'ev')
  const room = '/platform/rooms/ev'
  t.match(await ws.inbox.type('BroadcasterCreated'), { id: room })
  t.match(await ws.inbox.type('ResourceConnected'), { uuid: member.uuid, transport: 'WEBSOCKET', broadcaster: room })
  speak(member, { text: 'hi' })
  await member.inbox.type('message')
  t.match(await ws.inbox.type('MessageBroadcast', (e) => e.resourceCount === 1), { broadcasterId: room })

  // an admin write: the resource is disconnected, the action announced with its principal
  t.equal((await call(tp, 'DELETE', '/resources/' + member.uuid, { token: ALICE })).status, 200)
  t.match(await ws.inbox.type('ResourceDisconnected'), { uuid: member.uuid, reason: String })
  t.match(await ws.inbox.type('ControlActionExecuted'), {
    principal: 'alice',
    action: 'disconnect',
    target: member.uuid,
    success: true
  })
  // a refused write is announced too
  await call(tp, 'DELETE', '/resources/' + member.uuid, { token: BOB })
  t.match(await ws.inbox.type('ControlActionExecuted'), { principal: 'bob', action: 'disconnect.denied.role' })
  // the room outlives its last member only until destroyed
  const other = await wsMember(tp.url, 'ev2')
  await call(tp, 'DELETE', '/broadcasters/destroy?id=' + encodeURIComponent('/platform/rooms/ev2'), { token: ALICE })
  t.ok(await ws.inbox.type('BroadcasterDestroyed', (e) => e.id === '/platform/rooms/ev2'))
  await other.closed

  // agent sessions: the AI area's session registry, as an agent endpoint drives it
  const sessions = tp.platform.area(AI).sessions
  const s = sessions.start('helper', 'websocket')
  sessions.touch(s.sessionId)
  sessions.end(s.sessionId)
  t.match(await ws.inbox.type('AgentSessionStarted'), { agentName: 'helper', sessionId: s.sessionId })
  t.match(await ws.inbox.type('AgentSessionEnded'), {
    agentName: 'helper',
    sessionId: s.sessionId,
    duration: Number,
    messageCount: 1
  })

  // an MCP task: a task-augmented tools/call moves through its states
  getMcp(tp.platform)!.registerTool({
    name: 'slow_echo',
    taskSupport: 'optional',
    handler: async () => {
      await new Promise((r) => setTimeout(r, 30))
      return 'done'
    }
  })
  const session = await openSession(tp.url + '/platform/mcp')
  const created = (await session.call('tools/call', { name: 'slow_echo', arguments: {}, task: {} })).body.result.task
  t.match(await ws.inbox.type('TaskStateChanged', (e) => e.newState === 'completed'), {
    taskId: created.taskId,
    oldState: 'working',
    newState: 'completed',
    protocol: 'mcp'
  })

  // a coordinator's turn over SSE: each of its two calls is dispatched and completed under the
  // coordination id the turn reports to its own client
  const turn = await postTurn(tp.url, '/platform/agent/panel', 'What is a sandbox?')
  t.equal(turn.status, 200)
  t.match(turn.frames.at(-1), { event: 'complete' })
  const coordinationId = turn.frames.find((f) => f.event === 'agent-step')?.data.data.coordinationId
  t.match(coordinationId, /^coord-[0-9a-f-]{36}$/)
  for (const agentName of ['demo', 'critic']) {
    t.match(await ws.inbox.type('AgentDispatched', (e) => e.agentName === agentName), {
      coordinationId,
      skill: 'run'
    })
    t.match(await ws.inbox.type('AgentCompleted', (e) => e.agentName === agentName), {
      coordinationId,
      skill: 'run',
      duration: Number,
      success: true
    })
  }
  // the coordinator's own session ends after its turn: the last event of this test
  const last = await ws.inbox.type('AgentSessionEnded', (e) => e.agentName === 'panel')

  for (const e of ws.inbox.all) {
    t.match(e.timestamp, ISO, `${e.type} has an ISO timestamp`)
    t.equal(Object.keys(e)[0], 'type')
  }
  const seen = new Set(ws.inbox.all.map((e) => e.type))
  for (const type of [
    'ResourceConnected',
    'ResourceDisconnected',
    'BroadcasterCreated',
    'BroadcasterDestroyed',
    'MessageBroadcast',
    'AgentSessionStarted',
    'AgentSessionEnded',
    'TaskStateChanged',
    'AgentDispatched',
    'AgentCompleted',
    'ControlActionExecuted'
  ])
    t.ok(seen.has(type), type)
  t.notOk(seen.has('PluginsChanged'), 'internal events stay off the stream')
  contiguous(t, ws.inbox.all, 'WebSocket')

  // the SSE subscriber saw the same events, with `id:` = seq
  await reach(sse, last.seq)
  t.same(
    sse.inbox.all.map((e) => e.seq),
    ws.inbox.all.map((e) => e.seq)
  )
  t.same(
    sse.ids,
    sse.inbox.all.map((e) => e.seq)
  )
  t.same(sse.inbox.all, ws.inbox.all, 'same events on both transports')
  // a turn's events are batched (one corked write), yet each is its own message
  t.equal(ws.arrays, 0, 'no message holds an array')
  t.equal(ws.frames, ws.inbox.all.length, 'one message per event')
})

t.test('a subscriber that reconnects with after (or Last-Event-ID) misses nothing', async (t) => {
  // batch-ms 0: once per event-loop turn (the other tests run with the default batching)
  const tp = await adminPlatform({ ...FAST, 'platform.admin.events.replay': 1000, 'platform.admin.events.batch-ms': 0 })
  t.teardown(tp.close)
  const steady = await wsEvents(tp.url, '', auth)
  const first = await wsEvents(tp.url, '', auth)
  const member = await wsMember(tp.url, 'resume')
  for (let i = 0; i < 20; i++) speak(member, { i })
  await first.inbox.type('MessageBroadcast', () => first.inbox.all.length > 10)
  // drop in the middle of the traffic
  first.close()
  await first.closed
  const lastSeen = Math.max(...first.inbox.all.map((e) => e.seq))
  for (let i = 0; i < 20; i++) speak(member, { j: i })
  await member.inbox.next((f) => f.data?.j === 19)
  member.ws.close()
  await member.closed
  const final = await steady.inbox.type('ResourceDisconnected')

  const again = await wsEvents(tp.url, `?after=${lastSeen}`, auth)
  await reach(again, final.seq)
  const joined = [...first.inbox.all, ...again.inbox.all]
  contiguous(t, joined, 'before and after the reconnect')
  t.same(
    joined.map((e) => e.seq),
    steady.inbox.all.map((e) => e.seq),
    'the same events as a subscriber that never left'
  )

  const sse = await sseEvents(tp.url, '', { ...auth, 'last-event-id': String(lastSeen) })
  await reach(sse, final.seq)
  t.equal(sse.inbox.all[0]!.seq, lastSeen + 1, 'SSE Last-Event-ID resumes after it')
  t.same(sse.inbox.all, again.inbox.all)

  // a seq from before a restart (beyond the last one) gets the replay window instead of nothing
  const fresh = await wsEvents(tp.url, `?after=${final.seq + 1000}`, auth)
  await reach(fresh, final.seq)
  t.equal(fresh.inbox.all[0]!.seq, 1)
  for (const s of [steady, again, sse, fresh]) s.close()

  const bad = await wsEvents(tp.url, '?after=soon', auth).catch((e: { status: number; body: unknown }) => e)
  t.match(bad, { status: 400, body: { code: 'PLT_ERR_INVALID_QUERY' } })
})

t.test('a new subscriber gets the last N events, never more', async (t) => {
  const tp = await adminPlatform({ ...FAST, 'platform.admin.events.replay': 25 })
  t.teardown(tp.close)
  const steady = await wsEvents(tp.url, '', auth)
  const member = await wsMember(tp.url, 'bound')
  for (let i = 0; i < 60; i++) speak(member, { i })
  await member.inbox.next((f) => f.data?.i === 59)
  const last = await steady.inbox.type('MessageBroadcast', () => steady.inbox.all.length >= 63)
  const late = await wsEvents(tp.url, '', auth)
  await reach(late, last.seq)
  t.equal(late.inbox.all.length, 25)
  t.same(
    late.inbox.all,
    steady.inbox.all.filter((e) => e.seq > last.seq - 25)
  )
  t.equal(late.frames, 25, 'the replay is one message per event')
  t.equal(late.arrays, 0)
  // after= older than the window: what is still kept, from its oldest
  const old = await wsEvents(tp.url, '?after=1', auth)
  await reach(old, last.seq)
  t.equal(old.inbox.all[0]!.seq, last.seq - 24)
  for (const s of [steady, late, old]) s.close()
  member.ws.close()
})

t.test('events from before any subscriber are replayed from the ring as the same JSON', async (t) => {
  const tp = await adminPlatform({ ...FAST, 'platform.admin.events.replay': 25 })
  t.teardown(tp.close)
  // nobody subscribed: the ring keeps the bus's events and serialises them only when asked
  const member = await wsMember(tp.url, 'unwatched')
  for (let i = 0; i < 60; i++) speak(member, { i })
  await member.inbox.next((f) => f.data?.i === 59)
  await new Promise((r) => setTimeout(r, 150))
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10))
  }
  const ws = await wsEvents(tp.url, '', auth)
  await until(() => ws.inbox.all.length >= 25)
  t.equal(ws.inbox.all.length, 25, 'the replay window')
  t.equal(ws.frames, 25, 'one message per event')
  t.equal(ws.arrays, 0)
  contiguous(t, ws.inbox.all, 'replayed')
  t.match(ws.inbox.all.at(-1), { type: 'MessageBroadcast', broadcasterId: '/platform/rooms/unwatched' })
  for (const e of ws.inbox.all) {
    t.match(e.timestamp, ISO)
    t.equal(Object.keys(e)[0], 'type')
    t.equal(Object.keys(e).at(-1), 'seq')
  }
  // a second subscriber (SSE) gets the same events; then the live ones follow on without a gap
  const sse = await sseEvents(tp.url, '', auth)
  await until(() => sse.inbox.all.length >= 25)
  t.same(sse.inbox.all, ws.inbox.all)
  t.same(
    sse.ids,
    sse.inbox.all.map((e) => e.seq)
  )
  speak(member, { i: 60 })
  const live = await ws.inbox.type('MessageBroadcast', (e) => e.seq > ws.inbox.all[24]!.seq)
  t.equal(live.seq, ws.inbox.all[24]!.seq + 1)
  await reach(sse, live.seq)
  t.same(sse.inbox.all.at(-1), live)
  ws.close()
  sse.close()
  member.ws.close()
})

t.test('events taken after the last subscriber left keep their order behind its pending batch', async (t) => {
  // a long batch: the last subscriber leaves while events still wait to be sent
  const tp = await adminPlatform({
    ...FAST,
    'platform.admin.events.replay': 100,
    'platform.admin.events.batch-ms': 1000
  })
  t.teardown(tp.close)
  const only = await wsEvents(tp.url, '', auth)
  const member = await wsMember(tp.url, 'order')
  for (let i = 0; i < 5; i++) speak(member, { i })
  await member.inbox.next((f) => f.data?.i === 4)
  only.close()
  await only.closed
  // nobody subscribed now: these go to the replay window, after the batch still pending
  for (let i = 0; i < 5; i++) speak(member, { j: i })
  await member.inbox.next((f) => f.data?.j === 4)
  const late = await wsEvents(tp.url, '', auth)
  await late.inbox.type('MessageBroadcast', () => late.inbox.all.length >= 12)
  t.equal(late.inbox.all[0]!.seq, 1)
  contiguous(t, late.inbox.all, 'replayed in the order taken')
  t.ok(late.inbox.all.filter((e) => e.type === 'MessageBroadcast').length >= 10, 'the ten messages among them')
  late.close()
  member.ws.close()
})

t.test('a consumer that stops reading is closed, the others keep going', async (t) => {
  const tp = await adminPlatform({ ...WRITER, 'platform.transport.max-backpressure-bytes': 256 * 1024 })
  t.teardown(tp.close)
  const slow = await wsEvents(tp.url, '', auth)
  const fine = await wsEvents(tp.url, '', auth)
  const socket = (slow.ws as unknown as { _socket: { pause: () => void; resume: () => void } })._socket
  // stop reading: the kernel buffers fill, then uWS buffers, then the stream must act
  socket.pause()
  const cut = () => tp.logs.some((l) => l.msg === 'closing slow admin event subscriber (1008)')
  const big = 'x'.repeat(8 * 1024)
  let sent = 0
  // 8 KiB events, 50 a turn, until the slow one is dropped (at most 40 MB)
  while (!cut() && sent < 5000) {
    for (let i = 0; i < 50; i++) tp.platform.bus.emit('ResourceDisconnected', { uuid: big, reason: 'test' })
    sent += 50
    await new Promise((r) => setImmediate(r))
    if (fine.inbox.all.length < sent - 400) await reach(fine, sent - 200)
  }
  t.ok(cut(), `cut after ${sent} events`)
  t.ok(sent < 5000)
  // what happens after the cut goes to the others only
  for (let i = 0; i < 50; i++) tp.platform.bus.emit('ResourceDisconnected', { uuid: 'after', reason: 'test' })
  sent += 50
  socket.resume()
  t.same(
    await slow.closed,
    { code: 1008, reason: 'slow consumer' },
    'the client reads its backlog, then the close frame'
  )
  t.ok(slow.inbox.all.length < sent, `the slow one got ${slow.inbox.all.length} of ${sent}`)
  await reach(fine, sent)
  t.equal(fine.inbox.all.length, sent, 'the reading subscriber got every event')
  fine.close()
})

t.test('an SSE subscriber that stops reading is ended', async (t) => {
  const tp = await adminPlatform({ ...WRITER, 'platform.transport.max-backpressure-bytes': 256 * 1024 })
  t.teardown(tp.close)
  const fine = await wsEvents(tp.url, '', auth)
  // a raw socket: nothing reads ahead of us, so not reading is not reading
  const socket = connect(tp.port, '127.0.0.1')
  await new Promise((r) => socket.once('connect', r))
  socket.write(`GET ${EVENTS}?access_token=${ALICE} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`)
  let received = 0
  let tail = ''
  // the response ends (its last chunk) or the connection closes
  const ended = new Promise<void>((r) => {
    socket.on('data', (d: Buffer) => {
      received += d.length
      tail = (tail + d.toString('latin1')).slice(-16)
      if (tail.endsWith('\r\n0\r\n\r\n')) r()
    })
    socket.once('close', () => r())
  })
  await fine.inbox.next(() => true, 100).catch(() => undefined)
  await new Promise((r) => setTimeout(r, 100))
  socket.pause()
  const big = 'y'.repeat(8 * 1024)
  let sent = 0
  // 24 MB of 8 KiB events while it does not read: its queue is bounded by the backpressure limit
  while (sent < 3000) {
    for (let i = 0; i < 50; i++) tp.platform.bus.emit('ResourceDisconnected', { uuid: big, reason: 'sse' })
    sent += 50
    await new Promise((r) => setImmediate(r))
    if (fine.inbox.all.length < sent - 400) await reach(fine, sent - 200)
  }
  socket.resume()
  const gone = await Promise.race([ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))])
  t.ok(gone, 'the server ended the stream')
  t.ok(received < sent * 8 * 1024, `it got ${received} bytes, less than the ${sent * 8 * 1024} sent to the others`)
  await reach(fine, sent)
  t.equal(fine.inbox.all.length, sent, 'the reading subscriber got every event')
  fine.close()
})

t.test('authentication like content reads; heartbeats; enabled=false', async (t) => {
  const tp = await adminPlatform({ ...WRITER, 'platform.transport.heartbeat-seconds': 1 })
  t.teardown(tp.close)
  const refusal = {
    status: 401,
    body: { code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED', hint: /content-read-auth-required/ }
  }
  t.match(await wsEvents(tp.url).catch((e: unknown) => e), refusal, 'anonymous WebSocket refused')
  t.match(await sseEvents(tp.url).catch((e: unknown) => e), refusal, 'anonymous SSE refused')
  t.match(
    await wsEvents(tp.url, '?access_token=wrong').catch((e: unknown) => e),
    refusal,
    'an unknown token is anonymous'
  )
  const viaHeader = await wsEvents(tp.url, '', { 'x-platform-auth': BOB })
  const viaQuery = await wsEvents(tp.url, '?access_token=' + BOB)
  const sseQuery = await sseEvents(tp.url, '?access_token=' + BOB)
  await wsMember(tp.url, 'auth').then((m) => m.ws.close())
  for (const s of [viaHeader, viaQuery, sseQuery]) t.match(await s.inbox.type('ResourceConnected'), { seq: Number })
  // SSE heartbeat comments every heartbeat-seconds
  await new Promise((r) => setTimeout(r, 2300))
  t.ok(sseQuery.comments.includes('heartbeat'), 'SSE heartbeat comment')
  for (const s of [viaHeader, viaQuery, sseQuery]) s.close()

  const open = await adminPlatform({ 'platform.admin.content-read-auth-required': false })
  t.teardown(open.close)
  const anon = await wsEvents(open.url)
  anon.close()
  t.pass('with content reads open, anonymous subscribers are let in')

  const off = await adminPlatform({ 'platform.admin.enabled': false })
  t.teardown(off.close)
  t.equal((await fetch(off.url + EVENTS, { headers: auth })).status, 404)
  t.match(await wsEvents(off.url, '', auth).catch((e: unknown) => e), { message: /Unexpected server response|refused/ })
})
