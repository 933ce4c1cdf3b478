import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportOf } from '../../runtime/transport/index.js'
import { wsMember, sseMember, lpMember, say, leave, wsUrl } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

const tp = await startTestPlatform(
  {
    'platform.transport.long-polling-timeout-seconds': 1,
    'platform.transport.long-polling-idle-seconds': 2,
    // the 100 000-deep frame below must reach the JSON depth check, not the room's message cap
    'platform.transport.rooms.max-message-bytes': 1_048_576
  },
  { install: (p) => p.use(transportArea) }
)
t.teardown(tp.close)
const base = tp.url

t.test('members on WebSocket, SSE and long-polling share one room', async (t) => {
  const a = await wsMember(base, 'lobby')
  t.same(a.joined, {
    type: 'joined',
    room: 'lobby',
    uuid: a.uuid,
    transport: 'WEBSOCKET',
    members: [a.uuid],
    memberCount: 1
  })
  const b = await sseMember(base, 'lobby')
  t.equal(b.joined.transport, 'SSE')
  t.same(b.joined.members.sort(), [a.uuid, b.uuid].sort())
  t.same(await a.inbox.type('member-joined'), { type: 'member-joined', room: 'lobby', uuid: b.uuid, transport: 'SSE' })
  const c = await lpMember(base, 'lobby')
  t.equal(c.joined.transport, 'LONG_POLLING')
  t.equal(c.joined.members.length, 3)
  t.equal(c.joined.memberCount, 3)
  for (const m of [a, b])
    t.same(await m.inbox.type('member-joined', (f) => f.uuid === c.uuid), {
      type: 'member-joined',
      room: 'lobby',
      uuid: c.uuid,
      transport: 'LONG_POLLING'
    })
  t.equal(
    b.inbox.all.filter((f) => f.type === 'member-joined' && f.uuid === b.uuid).length,
    0,
    'a joiner is not told about itself'
  )

  // WebSocket member speaks: every member, the sender included, gets it
  a.ws.send(JSON.stringify({ text: 'hi from ws', n: 1 }))
  for (const m of [a, b, c])
    t.same(await m.inbox.type('message', (f) => f.from === a.uuid), {
      type: 'message',
      room: 'lobby',
      from: a.uuid,
      data: { text: 'hi from ws', n: 1 }
    })

  // SSE member speaks with a POST identified by its uuid
  const r1 = await say(base, 'lobby', b.uuid, ['sse', 2], b.token)
  t.equal(r1.status, 200)
  t.same(await r1.json(), { status: 'sent', resourceCount: 3 })
  for (const m of [a, b, c]) t.same((await m.inbox.type('message', (f) => f.from === b.uuid)).data, ['sse', 2])

  // long-polling member speaks, uuid in the query this time
  const r2 = await fetch(base + '/platform/rooms/lobby?uuid=' + c.uuid + '&token=' + c.token, {
    method: 'POST',
    body: '"plain string"'
  })
  t.equal(r2.status, 200)
  for (const m of [a, b, c]) t.equal((await m.inbox.type('message', (f) => f.from === c.uuid)).data, 'plain string')

  // leaving: each departure reaches the members who remain
  a.ws.close()
  t.equal((await a.closed).code, 1005)
  for (const m of [b, c])
    t.same(await m.inbox.type('member-left', (f) => f.uuid === a.uuid), {
      type: 'member-left',
      room: 'lobby',
      uuid: a.uuid,
      reason: 'closed by client'
    })
  const del = await leave(base, 'lobby', c.uuid, c.token)
  t.equal(del.status, 204)
  t.equal(await c.stopped, 200, 'the held poll was answered with a disconnected frame')
  t.same(await c.inbox.type('disconnected'), { type: 'disconnected', reason: 'left' })
  t.same(await b.inbox.type('member-left', (f) => f.uuid === c.uuid), {
    type: 'member-left',
    room: 'lobby',
    uuid: c.uuid,
    reason: 'left'
  })
  b.abort()
  await b.ended
  const tr = transportOf(tp.platform)
  for (let i = 0; i < 50 && tr.findBroadcaster('/platform/rooms/lobby') !== undefined; i++)
    await new Promise((r) => setTimeout(r, 20))
  t.equal(tr.findBroadcaster('/platform/rooms/lobby'), undefined, 'an empty room is destroyed')
})

t.test('invalid JSON from a WebSocket member earns it an error frame, nobody else hears it', async (t) => {
  const a = await wsMember(base, 'errors')
  const b = await wsMember(base, 'errors')
  await a.inbox.type('member-joined')
  const bad: (string | Buffer)[] = [
    '{"a":',
    'not json',
    '[1,2',
    '\u0000\u0001',
    '['.repeat(100_000),
    '{"a":' + '['.repeat(200) + ']'.repeat(200) + '}'
  ]
  // random bytes, text and binary (the leading 0xff keeps them from being valid JSON by chance)
  for (let i = 0; i < 20; i++)
    bad.push(Buffer.from([0xff, ...Array.from({ length: 200 }, () => Math.floor(Math.random() * 256))]))
  for (const f of bad) a.ws.send(f)
  for (let i = 0; i < bad.length; i++) {
    const e = await a.inbox.type('error')
    t.match(e.code, /^PLT_ERR_(MALFORMED_JSON|JSON_TOO_DEEP)$/)
    t.type(e.error, 'string')
  }
  a.ws.send('{"ok":true}')
  t.same((await b.inbox.type('message')).data, { ok: true }, 'the socket still works')
  t.equal(b.inbox.all.filter((f) => f.type === 'error').length, 0)
  a.ws.close()
  b.ws.close()
  await Promise.all([a.closed, b.closed])
})

t.test('a text frame that is not UTF-8 makes uWS drop that connection only', async (t) => {
  const a = await wsMember(base, 'utf')
  const b = await wsMember(base, 'utf')
  a.ws.send(Buffer.from([0x22, 0xff, 0xfe, 0x22]), { binary: false })
  t.equal((await a.closed).code, 1006)
  t.same((await b.inbox.type('member-left')).reason, 'invalid frame')
  t.equal((await fetch(base + '/healthz')).status, 200)
  b.ws.send('"still here"')
  t.equal((await b.inbox.type('message')).data, 'still here')
  b.ws.close()
  await b.closed
})

t.test('room names are validated on every transport', async (t) => {
  for (const name of ['has%20space', 'x'.repeat(129), 'semi%3Bcolon', '%E2%9C%93']) {
    const g = await fetch(base + '/platform/rooms/' + name, { headers: { accept: 'text/event-stream' } })
    t.equal(g.status, 400, name)
    t.equal(((await g.json()) as { code: string }).code, 'PLT_ERR_INVALID_ROOM')
    const p = await fetch(base + '/platform/rooms/' + name, {
      method: 'POST',
      body: '{}',
      headers: { 'x-platform-resource': 'x' }
    })
    t.equal(p.status, 400)
    const lp = await fetch(base + '/platform/rooms/' + name + '?transport=long-polling')
    t.equal(lp.status, 400)
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(wsUrl(base, '/platform/rooms/' + name))
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
    t.equal(status, 400, 'WebSocket upgrade refused: ' + name)
  }
  t.equal(
    (await fetch(base + '/platform/rooms/a.b_c-d:e?transport=long-polling')).status,
    200,
    'every allowed character'
  )
})

t.test('POST needs a member uuid of that room', async (t) => {
  const a = await wsMember(base, 'posting')
  const none = await fetch(base + '/platform/rooms/posting', { method: 'POST', body: '{}' })
  t.equal(none.status, 400)
  t.equal(((await none.json()) as { code: string }).code, 'PLT_ERR_MISSING_RESOURCE_ID')
  const unknown = await say(base, 'posting', '00000000-0000-0000-0000-000000000000', {})
  t.equal(unknown.status, 404)
  t.equal(((await unknown.json()) as { code: string }).code, 'PLT_ERR_UNKNOWN_RESOURCE')
  const other = await say(base, 'elsewhere', a.uuid, {})
  t.equal(other.status, 404, 'a member of another room cannot post here')
  const bad = await fetch(base + '/platform/rooms/posting', {
    method: 'POST',
    body: '{"a":',
    headers: { 'x-platform-resource': a.uuid }
  })
  t.equal(bad.status, 400)
  t.equal(a.inbox.all.filter((f) => f.type === 'message').length, 0, 'nothing was broadcast')
  const badTransport = await fetch(base + '/platform/rooms/posting?transport=carrier-pigeon')
  t.equal(badTransport.status, 400)
  a.ws.close()
  await a.closed
})

t.test('a long poll answers empty after the timeout, and a client that stops polling is dropped', async (t) => {
  const j = (await (await fetch(base + '/platform/rooms/quiet?transport=long-polling')).json()) as {
    uuid: string
    token: string
    messages: unknown[]
  }
  t.equal(j.messages.length, 1)
  const tr = transportOf(tp.platform)
  t.same(
    tr.listResources().find((r) => r.uuid === j.uuid),
    {
      uuid: j.uuid,
      transport: 'LONG_POLLING',
      isSuspended: false,
      isResumed: true,
      broadcaster: '/platform/rooms/quiet'
    }
  )
  const pending = fetch(base + '/platform/rooms/quiet?transport=long-polling&uuid=' + j.uuid + '&token=' + j.token)
  await new Promise((r) => setTimeout(r, 100))
  t.equal(tr.listResources().find((r) => r.uuid === j.uuid)?.isSuspended, true, 'suspended while the poll is held')
  const p = await pending
  t.equal(p.status, 200)
  t.same(await p.json(), { uuid: j.uuid, messages: [] })
  const gone = new Promise<{ reason: string }>((resolve) => {
    const off = tp.platform.bus.on('ResourceDisconnected', (e) => {
      if (e.uuid === j.uuid) {
        off()
        resolve(e)
      }
    })
  })
  t.equal((await gone).reason, 'timeout')
  const after = await fetch(base + '/platform/rooms/quiet?transport=long-polling&uuid=' + j.uuid + '&token=' + j.token)
  t.equal(after.status, 404)
})

t.test('a long-polling client whose queue overflows between polls is disconnected', async (t) => {
  const tp2 = await startTestPlatform(
    { 'platform.transport.long-polling-queue': 5 },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp2.close)
  const j = (await (await fetch(tp2.url + '/platform/rooms/q?transport=long-polling')).json()) as {
    uuid: string
    token: string
  }
  const tr = transportOf(tp2.platform)
  const reasons: string[] = []
  tp2.platform.bus.on('ResourceDisconnected', (e) => {
    reasons.push(e.reason)
  })
  for (let i = 0; i < 5; i++) tr.broadcast('/platform/rooms/q', { i })
  t.same(reasons, [], 'five queued frames fit')
  const p = (await (
    await fetch(tp2.url + '/platform/rooms/q?transport=long-polling&uuid=' + j.uuid + '&token=' + j.token)
  ).json()) as { messages: { i: number }[] }
  t.same(
    p.messages.map((m) => m.i),
    [0, 1, 2, 3, 4],
    'a poll with frames waiting answers at once, in order'
  )
  for (let i = 0; i < 6; i++) tr.broadcast('/platform/rooms/q', { i })
  t.same(reasons, ['queue overflow'])
  t.equal(
    (await fetch(tp2.url + '/platform/rooms/q?transport=long-polling&uuid=' + j.uuid + '&token=' + j.token)).status,
    404
  )
  t.ok(tp2.logs.some((l) => l.msg === 'disconnecting long-polling client: queue overflow'))

  // the queue is bounded in bytes too (platform.transport.max-backpressure-bytes)
  const tp3 = await startTestPlatform(
    { 'platform.transport.max-backpressure-bytes': 10_000 },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp3.close)
  const k = (await (await fetch(tp3.url + '/platform/rooms/q?transport=long-polling')).json()) as {
    uuid: string
    token: string
  }
  const gone: string[] = []
  tp3.platform.bus.on('ResourceDisconnected', (e) => {
    gone.push(e.reason)
  })
  transportOf(tp3.platform).broadcast('/platform/rooms/q', { blob: 'x'.repeat(6000) })
  t.same(gone, [])
  transportOf(tp3.platform).broadcast('/platform/rooms/q', { blob: 'x'.repeat(6000) })
  t.same(gone, ['queue overflow'])
  t.equal(
    (await fetch(tp3.url + '/platform/rooms/q?transport=long-polling&uuid=' + k.uuid + '&token=' + k.token)).status,
    404
  )
})

t.test('a joined frame lists at most 100 members and always the member count', async (t) => {
  const tp = await startTestPlatform({}, { install: (p) => p.use(transportArea) })
  t.teardown(tp.close)
  const url = tp.url.replace('http', 'ws') + '/platform/rooms/big'
  const sockets: WebSocket[] = []
  t.teardown(() => {
    for (const s of sockets) s.terminate()
  })
  let last: { members: string[]; memberCount: number } | undefined
  for (let i = 0; i < 101; i++) {
    const ws = new WebSocket(url)
    sockets.push(ws)
    last = await new Promise((resolve, reject) => {
      ws.on('message', (d) => {
        const f = JSON.parse(String(d))
        if (f.type === 'joined') resolve(f)
      })
      ws.once('error', reject)
    })
  }
  t.equal(last!.memberCount, 101)
  t.equal(last!.members.length, 100)
})
