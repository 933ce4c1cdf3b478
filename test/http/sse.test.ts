import t from 'tap'
import { connect } from 'node:net'
import { startTestPlatform } from '../helpers/platform.js'
import type { SseStream } from '../../runtime/http/index.js'

let slowStream: SseStream | undefined
const REUSED_BYTES = 64 * 1024
// 15 MiB: beyond what the kernel buffers for a paused client on loopback (about 4 MiB here), so some must queue
const REUSED_EVENTS = 240
let reusedQueued = 0
const tp = await startTestPlatform(
  { 'platform.transport.heartbeat-seconds': 1 },
  {
    install: (p) => {
      p.http.get('/events', (ctx) => {
        const s = ctx.sse({ retryMs: 1500, headers: { 'x-extra': 'yes' } })
        s.send({ event: 'greeting', id: 1, data: 'hello' })
        s.send({ id: 2, data: 'line one\nline two' })
        if (ctx.query.get('end') === '1') s.close()
      })
      p.http.get('/reused', (ctx) => {
        // one buffer rewritten for every event, as a turn's text batch does: the events that
        // wait in the queue must keep the bytes they were sent with
        const s = ctx.sse({ maxQueuedBytes: 64 * 1024 * 1024 })
        const buf = Buffer.alloc(REUSED_BYTES)
        let queued = 0
        for (let i = 0; i < REUSED_EVENTS; i++) {
          buf.write(
            `data: ${String(i).padStart(4, '0')}${'abcdefghij'[i % 10]!.repeat(REUSED_BYTES - 12)}\n\n`,
            'latin1'
          )
          if (!s.sendBytes(buf)) queued++
        }
        s.onDrain(() => s.close())
        reusedQueued = queued
      })
      p.http.get('/flood', (ctx) => {
        const s = (slowStream = ctx.sse({ maxQueuedBytes: 256 * 1024 }))
        const chunk = 'z'.repeat(64 * 1024)
        // far more than the socket buffers and the queue bound together
        for (let i = 0; i < 400 && !s.closed; i++) s.send({ data: chunk })
      })
    }
  }
)
t.teardown(tp.close)

t.test('SSE headers, retry, event and id lines, multi-line data', async (t) => {
  const r = await fetch(tp.url + '/events?end=1')
  t.equal(r.headers.get('content-type'), 'text/event-stream')
  t.equal(r.headers.get('cache-control'), 'no-cache')
  t.equal(r.headers.get('x-extra'), 'yes')
  t.ok(r.headers.get('x-request-id'))
  const text = await r.text()
  t.equal(text, 'retry: 1500\n\nevent: greeting\nid: 1\ndata: hello\n\nid: 2\ndata: line one\ndata: line two\n\n')
})

t.test('heartbeat comments keep an idle stream alive', async (t) => {
  const ac = new AbortController()
  const r = await fetch(tp.url + '/events', { signal: ac.signal })
  const reader = r.body!.getReader()
  let seen = ''
  const dec = new TextDecoder()
  while (!seen.includes(': heartbeat')) {
    const { value, done } = await reader.read()
    if (done) break
    seen += dec.decode(value)
  }
  t.match(seen, /: heartbeat\n\n/)
  ac.abort()
  const open = await (await fetch(tp.url + '/metrics')).text()
  t.match(open, /platform_open_connections\{transport="sse"\}/)
})

t.test('a client that never reads is closed once the queue bound is hit, never buffered without bound', async (t) => {
  const sock = connect(tp.port, '127.0.0.1')
  await new Promise((r) => sock.once('connect', r))
  sock.write('GET /flood HTTP/1.1\r\nHost: x\r\n\r\n')
  sock.pause() // never read
  for (let i = 0; i < 100 && (slowStream === undefined || !slowStream.closed); i++)
    await new Promise((r) => setTimeout(r, 20))
  t.ok(slowStream?.closed, 'the stream was closed by the server')
  sock.destroy()
  t.equal((await fetch(tp.url + '/healthz')).status, 200)
})

t.test('bytes the caller reuses keep what they held when sent, also when they wait in the queue', async (t) => {
  const sock = connect(tp.port, '127.0.0.1')
  await new Promise((r) => sock.once('connect', r))
  sock.write('GET /reused HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  sock.pause() // not read until the server has queued events
  for (let i = 0; i < 100 && reusedQueued === 0; i++) await new Promise((r) => setTimeout(r, 20))
  t.ok(reusedQueued > 0, `${reusedQueued} events waited in the queue`)
  const chunks: Buffer[] = []
  sock.on('data', (c: Buffer) => chunks.push(c))
  sock.resume()
  await new Promise((r) => sock.once('end', r))
  sock.destroy()
  const body = Buffer.concat(chunks).toString('latin1')
  const events = [...body.matchAll(/data: (\d{4})([a-j])\2*\n\n/g)]
  t.equal(events.length, REUSED_EVENTS, 'every event whole')
  t.same(
    events.map((m) => [Number(m[1]), m[2]]),
    Array.from({ length: REUSED_EVENTS }, (_, i) => [i, 'abcdefghij'[i % 10]]),
    'each with its own bytes, in order'
  )
})
