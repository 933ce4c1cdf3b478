import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { ROOM_JOIN_GUARD, transportOf } from '../../runtime/transport/index.js'
import { type RoomJoin, type RoomJoinGuard } from '../../runtime/transport/types.js'
import { transportArea } from '../../runtime/transport/install.js'
import { wsMember, sseMember, lpMember, say, leave, wsUrl, type Frame } from './clients.js'

// the guard governance would add, swapped by the test that needs one
let guard: RoomJoinGuard | undefined
const tp = await startTestPlatform(
  {},
  {
    install: async (p) => {
      await p.use(transportArea)
      p.extend(ROOM_JOIN_GUARD, (j) => guard?.(j) ?? { allow: true })
    }
  }
)
t.teardown(tp.close)
const base = tp.url
const tr = transportOf(tp.platform)

/** Status and JSON body of a refused WebSocket upgrade (101 when it opened). */
function upgrade(
  url: string,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: Frame | undefined }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers })
    ws.on('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (d) => {
        text += d
      })
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) })
      })
    })
    ws.on('open', () => {
      resolve({ status: 101, body: undefined })
      ws.close()
    })
    ws.on('error', () => {})
  })
}

const code = async (r: Response) => ((await r.json()) as { code: string }).code

t.test("a member's token reaches that member only; uuids stay public", async (t) => {
  const a = await wsMember(base, 'secrets')
  const b = await sseMember(base, 'secrets')
  const c = await lpMember(base, 'secrets')
  t.equal(a.joined.token, undefined, 'a WebSocket member needs no token: its socket is the proof')
  t.match(b.token, /^[A-Za-z0-9_-]{32}$/)
  t.match(c.token, /^[A-Za-z0-9_-]{32}$/)
  t.not(b.token, c.token)
  const sse = await fetch(base + '/platform/rooms/secrets', { headers: { accept: 'text/event-stream' } })
  t.match(sse.headers.get('x-platform-token'), /^[A-Za-z0-9_-]{32}$/, 'an SSE member also gets its token as a header')
  t.match(sse.headers.get('x-platform-resource'), /^[0-9a-f-]{36}$/)
  await sse.body?.cancel()
  a.ws.send('"hello"')
  for (const m of [a, b, c]) await m.inbox.type('message')
  for (const m of [a, b, c]) {
    const seen = JSON.stringify(m.inbox.all.filter((f) => f.type !== 'joined'))
    t.notOk(seen.includes(b.token) || seen.includes(c.token), 'no token in frames others receive')
  }
  t.ok(b.joined.members.includes(a.uuid), 'uuids are still listed')
  a.ws.close()
  b.abort()
  c.stop()
})

t.test('posting as another member is refused on every transport', async (t) => {
  const a = await wsMember(base, 'imposters')
  const b = await sseMember(base, 'imposters')
  const c = await lpMember(base, 'imposters')
  for (const [victim, who] of [
    [a.uuid, 'WebSocket'],
    [c.uuid, 'long-polling'],
    [b.uuid, 'SSE']
  ] as const) {
    const none = await say(base, 'imposters', victim, { forged: true })
    t.equal(none.status, 403, `no token, as the ${who} member`)
    t.equal(await code(none), 'PLT_ERR_RESOURCE_FORBIDDEN')
    const other = await say(base, 'imposters', victim, { forged: true }, victim === b.uuid ? c.token : b.token)
    t.equal(other.status, 403, `another member's token, as the ${who} member`)
    const query = await fetch(base + '/platform/rooms/imposters?uuid=' + victim + '&token=nope', {
      method: 'POST',
      body: '{"forged":true}'
    })
    t.equal(query.status, 403)
  }
  // a WebSocket frame speaks as its socket, whatever it claims inside
  a.ws.send(JSON.stringify({ type: 'message', from: c.uuid, forged: true }))
  const wrapped = await b.inbox.type('message', (f) => f.data.from === c.uuid)
  t.equal(wrapped.from, a.uuid, "the sender is the socket's member; a claimed `from` stays inside data")
  // the genuine members still speak
  t.equal((await say(base, 'imposters', b.uuid, { real: 'b' }, b.token)).status, 200)
  t.equal((await say(base, 'imposters', c.uuid, { real: 'c' }, c.token)).status, 200)
  await a.inbox.type('message', (f) => f.from === c.uuid)
  t.equal(
    a.inbox.all.filter((f) => f.type === 'message' && f.data.forged === true && f.from !== a.uuid).length,
    0,
    "no message was broadcast under a victim's uuid"
  )
  a.ws.close()
  b.abort()
  c.stop()
})

t.test('removing or polling for another member is refused', async (t) => {
  const a = await wsMember(base, 'kicks')
  const b = await sseMember(base, 'kicks')
  const c = await lpMember(base, 'kicks')
  for (const victim of [a.uuid, c.uuid]) {
    t.equal((await leave(base, 'kicks', victim)).status, 403, 'DELETE without a token')
    t.equal((await leave(base, 'kicks', victim, b.token)).status, 403, "DELETE with another member's token")
  }
  const hijack = await fetch(base + '/platform/rooms/kicks?transport=long-polling&uuid=' + c.uuid + '&token=' + b.token)
  t.equal(hijack.status, 403, 'a poll must prove it is the long-polling member')
  t.equal(tr.listResources('/platform/rooms/kicks').length, 3, 'everyone is still there')
  a.ws.send('"after the attempts"')
  t.equal((await c.inbox.type('message')).data, 'after the attempts', 'the long-polling member still gets its frames')
  t.equal((await leave(base, 'kicks', c.uuid, c.token)).status, 204, 'a member leaves with its own token')
  a.ws.close()
  b.abort()
})

t.test('rooms.auth=required: joining needs a principal, on every transport', async (t) => {
  const token = 'room-token-0123456789'
  const tp2 = await startTestPlatform(
    { 'platform.transport.rooms.auth': 'required', 'platform.auth.tokens': [{ token, principal: 'alice' }] },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp2.close)
  const ws = await upgrade(wsUrl(tp2.url, '/platform/rooms/members'))
  t.equal(ws.status, 401)
  t.equal(ws.body?.code, 'PLT_ERR_ROOM_AUTH_REQUIRED')
  const sse = await fetch(tp2.url + '/platform/rooms/members', { headers: { accept: 'text/event-stream' } })
  t.equal(sse.status, 401)
  t.equal(await code(sse), 'PLT_ERR_ROOM_AUTH_REQUIRED')
  const lp = await fetch(tp2.url + '/platform/rooms/members?transport=long-polling', {
    headers: { authorization: 'Bearer wrong-token-000000' }
  })
  t.equal(lp.status, 401, 'a wrong token is no principal')
  t.equal(transportOf(tp2.platform).listResources().length, 0, 'nothing joined')

  const auth = { authorization: 'Bearer ' + token }
  const a = await wsMember(tp2.url, 'members', '', auth)
  const b = await sseMember(tp2.url, 'members', '', { 'x-platform-auth': token })
  const c = await lpMember(tp2.url, 'members', '', auth)
  const tr2 = transportOf(tp2.platform)
  for (const m of [a, b, c]) t.equal(tr2.resource(m.uuid)?.principal, 'alice')
  a.ws.close()
  b.abort()
  c.stop()
})

t.test('a governance guard can deny a join, with its reason, on every transport', async (t) => {
  const seen: Omit<RoomJoin, 'headers'>[] = []
  guard = (j) => {
    seen.push({ room: j.room, principal: j.principal, transport: j.transport })
    return j.room === 'vault' ? { allow: false, reason: 'room sealed by policy' } : { allow: true }
  }
  t.teardown(() => {
    guard = undefined
  })
  const ws = await upgrade(wsUrl(base, '/platform/rooms/vault'))
  t.equal(ws.status, 403)
  t.same(ws.body, { error: "Joining room 'vault' denied: room sealed by policy", code: 'PLT_ERR_ROOM_JOIN_DENIED' })
  const sse = await fetch(base + '/platform/rooms/vault', { headers: { accept: 'text/event-stream' } })
  t.equal(sse.status, 403)
  t.equal(await code(sse), 'PLT_ERR_ROOM_JOIN_DENIED')
  const lp = await fetch(base + '/platform/rooms/vault?transport=long-polling')
  t.equal(lp.status, 403)
  t.equal(tr.listResources('/platform/rooms/vault').length, 0, 'nothing joined')
  t.same(
    seen.map((s) => s.transport),
    ['WEBSOCKET', 'SSE', 'LONG_POLLING']
  )
  t.same(seen[0], { room: 'vault', principal: null, transport: 'WEBSOCKET' })
  const ok = await wsMember(base, 'lounge')
  t.equal(ok.joined.room, 'lounge', 'other rooms are allowed')
  ok.ws.close()
})

t.test('a member over its message rate: WebSocket closed 1008, POST answered 429', async (t) => {
  // one message per second after a burst of five: slow enough that a loaded machine cannot refill mid-test
  const tp3 = await startTestPlatform(
    { 'platform.transport.rooms.max-messages-per-second': 1, 'platform.transport.rooms.message-burst': 5 },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp3.close)
  const peer = await wsMember(tp3.url, 'chatty')
  const a = await wsMember(tp3.url, 'chatty')
  for (let i = 0; i < 8; i++) a.ws.send(JSON.stringify({ i }))
  t.same(await a.closed, { code: 1008, reason: 'rate limit exceeded' })
  t.equal((await peer.inbox.type('member-left', (f) => f.uuid === a.uuid)).reason, 'rate limit exceeded')
  t.equal(
    peer.inbox.all.filter((f) => f.type === 'message' && f.from === a.uuid).length,
    5,
    'the burst went through, nothing after it'
  )

  for (const m of [await sseMember(tp3.url, 'chatty'), await lpMember(tp3.url, 'chatty')]) {
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 6; i++) {
      last = await say(tp3.url, 'chatty', m.uuid, { i }, m.token)
      statuses.push(last.status)
    }
    t.same(statuses, [200, 200, 200, 200, 200, 429])
    t.equal(await code(last!), 'PLT_ERR_RATE_LIMITED')
    t.equal(last!.headers.get('retry-after'), '1')
    await new Promise((r) => setTimeout(r, 1100))
    t.equal(
      (await say(tp3.url, 'chatty', m.uuid, { later: true }, m.token)).status,
      200,
      'the member stays and may speak again once refilled'
    )
  }
  peer.ws.close()
})

t.test('a message over rooms.max-message-bytes: WebSocket closed 1009, POST answered 413', async (t) => {
  const tp4 = await startTestPlatform(
    { 'platform.transport.rooms.max-message-bytes': 1000 },
    { install: (p) => p.use(transportArea) }
  )
  t.teardown(tp4.close)
  const peer = await wsMember(tp4.url, 'big')
  const a = await wsMember(tp4.url, 'big')
  a.ws.send(JSON.stringify({ s: 'x'.repeat(900) }))
  t.equal((await peer.inbox.type('message', (f) => f.from === a.uuid)).data.s.length, 900, 'under the cap passes')
  a.ws.send(JSON.stringify({ s: 'x'.repeat(1500) }))
  t.same(await a.closed, { code: 1009, reason: 'message too big' })
  const s = await sseMember(tp4.url, 'big')
  const r = await say(tp4.url, 'big', s.uuid, { s: 'x'.repeat(1500) }, s.token)
  t.equal(r.status, 413)
  t.equal(await code(r), 'PLT_ERR_BODY_TOO_LARGE')
  t.equal((await say(tp4.url, 'big', s.uuid, { s: 'x'.repeat(900) }, s.token)).status, 200)
  peer.ws.close()
  s.abort()
})
