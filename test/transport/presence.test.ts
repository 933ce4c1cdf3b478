import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportOf } from '../../runtime/transport/index.js'
import { wsMember, sseMember, lpMember, say, leave, wsUrl, type Frame, type Inbox } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

const tp = await startTestPlatform(
  { 'platform.transport.long-polling-timeout-seconds': 1 },
  { install: (p) => p.use(transportArea) }
)
t.teardown(tp.close)
const base = tp.url
const tr = transportOf(tp.platform)

/** A room member on any transport, as the tests drive it. */
interface Member {
  uuid: string
  joined: Frame
  inbox: Inbox
  speak: (data: unknown) => Promise<void>
  /** Leaves and resolves once the server has unregistered it (so later leaves come after). */
  leave: () => Promise<void>
}

type Kind = 'websocket' | 'sse' | 'long-polling'

/** Resolves when the server unregisters `uuid`; subscribe before causing it. */
function gone(uuid: string): Promise<string> {
  return new Promise((resolve) => {
    const off = tp.platform.bus.on('ResourceDisconnected', (e) => {
      if (e.uuid === uuid) {
        off()
        resolve(e.reason)
      }
    })
  })
}

async function join(kind: Kind, room: string, query = '', headers: Record<string, string> = {}): Promise<Member> {
  if (kind === 'websocket') {
    const m = await wsMember(base, room, query === '' ? '' : '?' + query, headers)
    return {
      uuid: m.uuid,
      joined: m.joined,
      inbox: m.inbox,
      speak: async (data) => {
        m.ws.send(JSON.stringify(data))
      },
      leave: async () => {
        const g = gone(m.uuid)
        m.ws.close()
        await Promise.all([g, m.closed])
      }
    }
  }
  const post =
    (uuid: string, token: string) =>
    async (data: unknown): Promise<void> => {
      const r = await say(base, room, uuid, data, token)
      if (r.status !== 200) throw new Error('POST ' + r.status + ' ' + (await r.text()))
    }
  if (kind === 'sse') {
    const s = await sseMember(base, room, query === '' ? '' : '?' + query, headers)
    return {
      uuid: s.uuid,
      joined: s.joined,
      inbox: s.inbox,
      speak: post(s.uuid, s.token),
      leave: async () => {
        const g = gone(s.uuid)
        s.abort()
        await Promise.all([g, s.ended])
      }
    }
  }
  const l = await lpMember(base, room, query === '' ? '' : '&' + query, headers)
  return {
    uuid: l.uuid,
    joined: l.joined,
    inbox: l.inbox,
    speak: post(l.uuid, l.token),
    leave: async () => {
      const g = gone(l.uuid)
      const del = await leave(base, room, l.uuid, l.token)
      if (del.status !== 204) throw new Error('DELETE ' + del.status)
      await Promise.all([g, l.stopped])
    }
  }
}

const KINDS: Kind[] = ['websocket', 'sse', 'long-polling']
const WAYS: [string, string, Record<string, string>][] = [
  ['query presence=false', 'presence=false', {}],
  ['header X-Platform-Presence: false', '', { 'x-platform-presence': 'false' }]
]

for (const kind of KINDS) {
  for (const [way, query, headers] of WAYS) {
    t.test(`a silent ${kind} member (${way}) is not announced but hears and speaks`, async (t) => {
      const room = 'silent-' + kind + '-' + (query === '' ? 'header' : 'query')
      const observer = await join('websocket', room)
      const silent = await join(kind, room, query, headers)
      t.equal(silent.joined.type, 'joined', 'it gets its own joined frame')
      t.equal(silent.joined.uuid, silent.uuid)
      t.equal(silent.joined.memberCount, 2)
      t.ok(silent.joined.members.includes(observer.uuid))

      // frames on one connection are ordered: had the silent join been announced, the observer
      // would get that announcement before this later member's
      const normal = await join('websocket', room)
      t.equal(normal.joined.memberCount, 3, 'the silent member still counts as a member')
      t.same(
        await observer.inbox.type('member-joined'),
        { type: 'member-joined', room, uuid: normal.uuid, transport: 'WEBSOCKET' },
        "the first announcement the observer gets is the normal member's"
      )
      t.equal((await silent.inbox.type('member-joined')).uuid, normal.uuid, 'the silent member hears others join')

      await silent.speak({ text: 'from the silent one' })
      for (const m of [observer, normal, silent])
        t.same((await m.inbox.type('message', (f) => f.from === silent.uuid)).data, { text: 'from the silent one' })
      await normal.speak('hello')
      t.equal((await silent.inbox.type('message', (f) => f.from === normal.uuid)).data, 'hello', 'it hears messages')

      // the silent member leaves first; the first departure the observer hears is the normal member's
      await silent.leave()
      await normal.leave()
      t.same(await observer.inbox.type('member-left'), {
        type: 'member-left',
        room,
        uuid: normal.uuid,
        reason: 'closed by client'
      })
      t.equal(
        observer.inbox.all.filter((f) => f.uuid === silent.uuid).length,
        0,
        'no frame ever named the silent member'
      )
      await observer.leave()
    })
  }
}

t.test('presence=true, or no presence, is announced; the query parameter wins over the header', async (t) => {
  const observer = await join('websocket', 'loud')
  const joiners: [Kind, string, Record<string, string>][] = [
    ['websocket', 'presence=true', {}],
    ['sse', '', { 'x-platform-presence': 'true' }],
    ['long-polling', '', {}],
    ['sse', 'presence=true', { 'x-platform-presence': 'false' }]
  ]
  const members: Member[] = []
  for (const [kind, query, headers] of joiners) {
    const m = await join(kind, 'loud', query, headers)
    members.push(m)
    t.equal(
      (await observer.inbox.type('member-joined')).uuid,
      m.uuid,
      `${kind} ${query} ${JSON.stringify(headers)} announced`
    )
  }
  for (const m of members) {
    await m.leave()
    t.equal((await observer.inbox.type('member-left')).uuid, m.uuid)
  }
  await observer.leave()
})

t.test('a room of silent members lives while they are there and is destroyed when they leave', async (t) => {
  const a = await join('websocket', 'hush', 'presence=false')
  const b = await join('long-polling', 'hush', 'presence=false')
  t.equal(b.joined.memberCount, 2)
  t.same(
    tr
      .listResources('/platform/rooms/hush')
      .map((r) => r.uuid)
      .sort(),
    [a.uuid, b.uuid].sort()
  )
  await a.leave()
  t.not(tr.findBroadcaster('/platform/rooms/hush'), undefined)
  await b.leave()
  t.equal(tr.findBroadcaster('/platform/rooms/hush'), undefined)
  t.equal(b.inbox.all.filter((f) => f.type === 'member-joined' || f.type === 'member-left').length, 0)
})

/** A refused WebSocket upgrade's status and JSON body (status 101 if it was accepted). */
function upgradeRefusal(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers })
    ws.on('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (d: Buffer) => {
        text += String(d)
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

t.test('a presence other than true or false is refused on every transport and nothing joins', async (t) => {
  const observer = await join('websocket', 'picky')
  const bad: [string, string, Record<string, string>][] = [
    ['maybe', 'presence=maybe', {}],
    ['', 'presence=', {}],
    ['FALSE', 'presence=FALSE', {}],
    ['no', '', { 'x-platform-presence': 'no' }],
    ['0', 'presence=0', { 'x-platform-presence': 'false' }]
  ]
  const url = base + '/platform/rooms/picky'
  for (const [value, query, headers] of bad) {
    const what = query + ' ' + JSON.stringify(headers)
    const sse = await fetch(url + (query === '' ? '' : '?' + query), {
      headers: { accept: 'text/event-stream', ...headers }
    })
    t.equal(sse.status, 400, 'SSE ' + what)
    t.same(await sse.json(), {
      error: `Invalid presence '${value}': use 'true' or 'false'`,
      code: 'PLT_ERR_INVALID_PRESENCE',
      hint: "Query parameter presence or header X-Platform-Presence; 'false' joins the room without announcing the member"
    })
    const lp = await fetch(url + '?transport=long-polling' + (query === '' ? '' : '&' + query), { headers })
    t.equal(lp.status, 400, 'long-polling ' + what)
    t.equal(((await lp.json()) as { code: string }).code, 'PLT_ERR_INVALID_PRESENCE')
    const ws = await upgradeRefusal(wsUrl(base, '/platform/rooms/picky') + (query === '' ? '' : '?' + query), headers)
    t.equal(ws.status, 400, 'WebSocket upgrade ' + what)
    t.equal(ws.body?.code, 'PLT_ERR_INVALID_PRESENCE')
  }
  t.same(
    tr.listResources('/platform/rooms/picky').map((r) => r.uuid),
    [observer.uuid],
    'only the observer is a member'
  )
  const next = await join('sse', 'picky')
  t.equal(next.joined.memberCount, 2)
  t.equal((await observer.inbox.type('member-joined')).uuid, next.uuid, 'no refused join was announced before this one')
  await next.leave()
  await observer.leave()
})

t.test('presence is read only when joining: polls, POSTs and DELETEs ignore it', async (t) => {
  const m = await lpMember(base, 'once')
  const r = await fetch(base + '/platform/rooms/once?presence=bogus', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-platform-resource': m.uuid, 'x-platform-token': m.token },
    body: '"x"'
  })
  t.equal(r.status, 200)
  t.equal((await m.inbox.type('message')).data, 'x')
  const g = gone(m.uuid)
  const d = await fetch(base + '/platform/rooms/once?presence=bogus', {
    method: 'DELETE',
    headers: { 'x-platform-resource': m.uuid, 'x-platform-token': m.token }
  })
  t.equal(d.status, 204)
  t.equal(await g, 'left')
})
