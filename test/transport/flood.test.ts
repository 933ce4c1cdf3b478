import t from 'tap'
import WebSocket from 'ws'
import { connect } from 'node:net'
import { startTestPlatform } from '../helpers/platform.js'
import { transportOf } from '../../runtime/transport/index.js'
import { wsUrl } from './clients.js'
import { transportArea } from '../../runtime/transport/install.js'

const tp = await startTestPlatform({}, { install: (p) => p.use(transportArea) })
t.teardown(tp.close)
const base = tp.url
const tr = transportOf(tp.platform)

t.test('1 000 WebSocket connections opened and dropped while a request stream keeps succeeding', async (t) => {
  const statuses: number[] = []
  let running = true
  // four concurrent request streams
  const stream = Promise.all(
    [0, 1, 2, 3].map(async () => {
      while (running) {
        const r = await fetch(base + '/healthz')
        statuses.push(r.status)
        await r.arrayBuffer()
      }
    })
  )
  const duringFlood: number[] = []
  const url = wsUrl(base, '/platform/rooms/flood')
  let opened = 0
  let failed = 0
  const BATCH = 100
  for (let i = 0; i < 1000; i += BATCH) {
    await Promise.all(
      Array.from(
        { length: BATCH },
        (_, k) =>
          new Promise<void>((resolve) => {
            const ws = new WebSocket(url)
            ws.on('error', () => {
              failed++
              resolve()
            })
            ws.once('message', () => {
              // drop it rudely (no close frame) or politely, alternately
              opened++
              if ((i + k) % 2 === 0) ws.terminate()
              else ws.close()
              resolve()
            })
          })
      )
    )
    duringFlood.push(statuses.length)
  }
  // and 200 raw connections dropped half-way through the upgrade request
  await Promise.all(
    Array.from(
      { length: 200 },
      () =>
        new Promise<void>((resolve) => {
          const s = connect(tp.port, '127.0.0.1', () => {
            s.write(
              'GET /platform/rooms/flood HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
            )
            s.destroy()
            resolve()
          })
          s.on('error', () => {
            resolve()
          })
        })
    )
  )
  // what was dropped is forgotten
  for (let i = 0; i < 200 && tr.resourceCount > 0; i++) await new Promise((r) => setTimeout(r, 25))
  running = false
  await stream
  t.equal(opened, 1000, 'every connection was accepted and joined')
  t.equal(failed, 0)
  t.equal(tr.resourceCount, 0, 'every dropped connection was unregistered')
  t.ok(statuses.length > 0, `${statuses.length} concurrent requests`)
  t.ok(
    duringFlood[duringFlood.length - 1]! > duringFlood[0]!,
    `requests completed while the flood ran (${duringFlood.join(', ')})`
  )
  t.same([...new Set(statuses)], [200], 'all 200')
  const m = await tp.platform.metrics.text()
  t.match(m, /platform_open_connections\{transport="websocket"\} 0\b/)
  // and the server still serves WebSockets
  const ws = new WebSocket(url)
  const first = await new Promise<string>((resolve) => {
    ws.on('message', (d) => {
      resolve(String(d))
    })
  })
  t.equal(JSON.parse(first).type, 'joined')
  ws.close()
})
