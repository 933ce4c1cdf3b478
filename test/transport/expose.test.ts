import t from 'tap'
import WebSocket from 'ws'
import { startTestPlatform } from '../helpers/platform.js'
import { transportOf, Frame } from '../../runtime/transport/index.js'
import { PlatformError } from '../../runtime/contracts/index.js'
import { AUTH_ERRORS } from '../../runtime/auth/index.js'
import { Inbox, wsUrl } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

// an area streams its own broadcasters: /feeds/{name}, key required, subscribe-only
const tp = await startTestPlatform(
  {},
  {
    install: async (p) => {
      await p.use(transportArea)
      transportOf(p).expose('/feeds/{name}', {
        className: 'FeedBroadcaster',
        resolve: (req) => {
          if (req.headers['x-feed-key'] !== 'k' && req.query.get('key') !== 'k')
            throw new PlatformError(AUTH_ERRORS.ADMIN_FORBIDDEN)
          return 'feed:' + req.params.name
        },
        joined: (r) => {
          r.deliver(Frame.of({ hello: r.uuid }))
        }
      })
    }
  }
)
t.teardown(tp.close)
const tr = transportOf(tp.platform)

t.test('an exposed endpoint refuses what resolve refuses, on every transport', async (t) => {
  const status = await new Promise<number>((resolve) => {
    const ws = new WebSocket(wsUrl(tp.url, '/feeds/a'))
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
  t.equal(status, 403)
  t.equal((await fetch(tp.url + '/feeds/a', { headers: { accept: 'text/event-stream' } })).status, 403)
  t.equal((await fetch(tp.url + '/feeds/a?transport=long-polling')).status, 403)
  t.equal(
    (await fetch(tp.url + '/feeds/a?key=k', { method: 'POST', body: '{}' })).status,
    405,
    'no message hook: no POST'
  )
})

t.test("subscribers on WebSocket, SSE and long-polling get the broadcaster's messages", async (t) => {
  const inbox = new Inbox()
  const ws = new WebSocket(wsUrl(tp.url, '/feeds/news'), { headers: { 'x-feed-key': 'k' } })
  ws.on('message', (d) => {
    inbox.push(JSON.parse(String(d)))
  })
  const hello = await inbox.next((f) => f.hello !== undefined)
  const lp = (await (await fetch(tp.url + '/feeds/news?transport=long-polling&key=k')).json()) as {
    uuid: string
    token: string
    messages: { hello: string }[]
  }
  t.equal(lp.messages[0]!.hello, lp.uuid)
  t.same(
    tr.listBroadcasters().find((b) => b.id === 'feed:news'),
    { id: 'feed:news', className: 'FeedBroadcaster', resourceCount: 2, isDestroyed: false }
  )
  ws.send('{"ignored":true}')
  t.equal(tr.broadcast('feed:news', { n: 1 }), 2)
  t.same(await inbox.next((f) => f.n !== undefined), { n: 1 })
  const poll = (await (
    await fetch(tp.url + '/feeds/news?transport=long-polling&key=k&uuid=' + lp.uuid + '&token=' + lp.token)
  ).json()) as { messages: unknown[] }
  t.same(poll.messages, [{ n: 1 }])
  t.equal(
    inbox.all.filter((f) => f.ignored !== undefined || f.type === 'error').length,
    0,
    'frames from subscribers are ignored'
  )
  // a WebSocket subscriber is removed by its own socket only, never by its (public) uuid
  const kick = await fetch(tp.url + '/feeds/news?key=k', {
    method: 'DELETE',
    headers: { 'x-platform-resource': hello.hello }
  })
  t.equal(kick.status, 403)
  const del = await fetch(tp.url + '/feeds/news?key=k', {
    method: 'DELETE',
    headers: { 'x-platform-resource': lp.uuid, 'x-platform-token': lp.token }
  })
  t.equal(del.status, 204)
  t.same(
    tr.listResources('feed:news').map((r) => r.uuid),
    [hello.hello]
  )
  t.ok(tr.destroyBroadcaster('feed:news'))
})
