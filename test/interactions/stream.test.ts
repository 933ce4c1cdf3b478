import t from 'tap'
import WebSocket from 'ws'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { ALICE, BOB } from './helpers.js'
import { STREAM, readSse, readWs, range, seqs, startStreaming, until } from './stream-helpers.js'

const DELTAS = 40

t.test('live stream over WebSocket and SSE', async (t) => {
  const tp = await startStreaming(DELTAS, 15)
  t.teardown(tp.close)
  const auth = { authorization: `Bearer ${ALICE}` }

  // a background run, joined once it has captured a few steps: replay first, then live, then the end
  const created = await tp.api.create({ message: 'count', background: true })
  t.equal(created.status, 200)
  const id = created.body.id
  await until(async () => (await tp.api.get(id)).body.steps.length >= 5)
  const [ws, sse] = await Promise.all([
    readWs(`${tp.url}${STREAM}?id=${id}`, auth),
    readSse(`${tp.url}${STREAM}?id=${id}`, auth)
  ])
  const final = await tp.api.settled(id)
  t.equal(final.status, 'COMPLETED')
  const all = range(0, final.steps.length - 1)
  for (const [name, got] of [
    ['ws', ws],
    ['sse', sse]
  ] as const) {
    t.same(seqs(got), all, `${name}: every seq once, in order`)
    t.same(
      got.frames.filter((f) => f.type === 'interaction-step').map((f) => f.step),
      final.steps,
      `${name}: the steps are the stored ones`
    )
    t.same(
      got.frames.at(-1),
      { type: 'interaction-terminal', id, status: 'COMPLETED', finalText: final.finalText, errorMessage: null },
      `${name}: ends with the terminal frame`
    )
    t.equal(got.frames.filter((f) => f.type === 'interaction-terminal').length, 1)
  }
  t.equal(ws.closeCode, 1000, 'the server closes the socket after the terminal frame')
  t.same(
    sse.ids.slice(0, -1),
    all.map((n) => String(n)),
    "each SSE step event's id is its seq"
  )
  t.equal(sse.ids.at(-1), undefined, 'the terminal event carries no id')
  t.ok(final.steps.length > DELTAS, 'one step per delta plus the terminal steps')
  await until(() => tp.service.feed.watched === 0)
  t.equal(tp.service.feed.watched, 0, 'closed streams leave no feed subscription')

  t.test('resume after a seq: only what the client missed', async (t) => {
    const q = `${tp.url}${STREAM}?id=${id}`
    const viaAfter = await readWs(`${q}&after=10`, auth)
    t.same(seqs(viaAfter), range(11, final.steps.length - 1))
    t.equal(viaAfter.frames.at(-1).type, 'interaction-terminal')
    const viaHeader = await readSse(q, { ...auth, 'last-event-id': '20' })
    t.same(seqs(viaHeader), range(21, final.steps.length - 1), 'SSE Last-Event-ID')
    const both = await readSse(`${q}&after=5`, { ...auth, 'last-event-id': '30' })
    t.same(seqs(both), range(31, final.steps.length - 1), 'the newer of after and Last-Event-ID wins')
    const atEnd = await readWs(`${q}&after=${final.steps.length - 1}`, auth)
    t.same(seqs(atEnd), [], 'nothing missed: only the terminal frame')
    t.equal(atEnd.frames.length, 1)
    const sseAll = await readSse(`${q}&after=-1`, auth)
    t.same(seqs(sseAll), all, 'after=-1 replays everything')
  })

  t.test('GET /api/interactions/{id}?stream=true is the same SSE stream', async (t) => {
    const r = await readSse(`${tp.url}/api/interactions/${id}?stream=true&after=3`, auth)
    t.equal(r.status, 200)
    t.same(seqs(r), range(4, final.steps.length - 1))
    t.equal(r.frames.at(-1).type, 'interaction-terminal')
    const other = await readSse(`${tp.url}/api/interactions/${id}?stream=true`, { authorization: `Bearer ${BOB}` })
    t.equal(other.status, 404)
    t.equal(other.body.code, 'PLT_ERR_INTERACTION_NOT_FOUND')
    const plain = await tp.api.get(id)
    t.equal(plain.body.id, id, 'without stream=true the read is the JSON record')
  })

  t.test('ownership: not owned answers exactly like unknown', async (t) => {
    const unknown = 'int-does-not-exist'
    for (const [name, read] of [
      ['ws', readWs],
      ['sse', readSse]
    ] as const) {
      const notOwned = await read(`${tp.url}${STREAM}?id=${id}`, { authorization: `Bearer ${BOB}` })
      const missing = await read(`${tp.url}${STREAM}?id=${unknown}`, { authorization: `Bearer ${BOB}` })
      t.equal(notOwned.status, 404, `${name}: another principal gets 404`)
      t.same(notOwned.body, { ...missing.body, error: missing.body.error.replace(unknown, id) })
      t.equal(notOwned.frames.length, 0, `${name}: and no frame`)
      const anonymous = await read(`${tp.url}${STREAM}?id=${id}`)
      t.equal(anonymous.status, 404, `${name}: anonymous gets 404`)
      t.equal(anonymous.body.code, 'PLT_ERR_INTERACTION_NOT_FOUND')
      const viaQuery = await read(`${tp.url}${STREAM}?id=${id}&access_token=${ALICE}`)
      t.same(seqs(viaQuery), all, `${name}: access_token in the query (browsers)`)
      const wrongQuery = await read(`${tp.url}${STREAM}?id=${id}&access_token=${BOB}`)
      t.equal(wrongQuery.status, 404, `${name}: another principal's access_token`)
      const headerWins = await read(`${tp.url}${STREAM}?id=${id}&access_token=${ALICE}`, {
        authorization: `Bearer ${BOB}`
      })
      t.equal(headerWins.status, 404, `${name}: a header the client sent wins over the query`)
    }
  })

  t.test('bad requests are refused with the catalogue', async (t) => {
    for (const read of [readWs, readSse]) {
      const noId = await read(`${tp.url}${STREAM}`, auth)
      t.equal(noId.status, 400)
      t.equal(noId.body.code, 'PLT_ERR_INTERACTION_ID_INVALID')
      const badId = await read(`${tp.url}${STREAM}?id=a%20b`, auth)
      t.equal(badId.body.code, 'PLT_ERR_INTERACTION_ID_INVALID')
      for (const after of ['x', '-2', '1.5', '99999999999999999999']) {
        const bad = await read(`${tp.url}${STREAM}?id=${id}&after=${after}`, auth)
        t.equal(bad.status, 400, `after=${after}`)
        t.equal(bad.body.code, 'PLT_ERR_INVALID_QUERY')
      }
    }
    const badHeader = await readSse(`${tp.url}${STREAM}?id=${id}`, { ...auth, 'last-event-id': 'abc' })
    t.equal(badHeader.status, 400)
    t.match(badHeader.body.error, /Last-Event-ID/)
  })
})

t.test('interactions switched off: no stream either', async (t) => {
  const tp = await startTestPlatform({ 'platform.interactions.enabled': false }, { install: installAreas })
  t.teardown(tp.close)
  const r = await readSse(`${tp.url}${STREAM}?id=int-x`)
  t.equal(r.status, 404)
  t.equal(r.body.code, 'PLT_ERR_NOT_FOUND')
})

t.test('SSE tells an EventSource to come back after a second', async (t) => {
  const tp = await startStreaming(3, 0)
  t.teardown(tp.close)
  const created = await tp.api.create({ message: 'x' })
  const res = await fetch(`${tp.url}${STREAM}?id=${created.body.id}&access_token=${ALICE}`)
  t.match(await res.text(), /^retry: 1000\n\n/)
})

t.test('store:false still streams live, from the run itself', async (t) => {
  const tp = await startStreaming(DELTAS, 10)
  t.teardown(tp.close)
  const created = await tp.api.create({ message: 'ephemeral', background: true, store: false })
  const id = created.body.id
  await until(async () => (await tp.api.get(id)).body?.steps?.length >= 3)
  const auth = { authorization: `Bearer ${ALICE}` }
  const [ws, sse] = await Promise.all([
    readWs(`${tp.url}${STREAM}?id=${id}`, auth),
    readSse(`${tp.url}${STREAM}?id=${id}&after=1`, auth)
  ])
  const n = seqs(ws).length
  t.ok(n > DELTAS, 'one step per delta')
  t.same(seqs(ws), range(0, n - 1), 'ws: replayed from the run, then live')
  t.same(seqs(sse), range(2, n - 1), 'sse: resumed after a seq')
  t.match(ws.frames.at(-1), { type: 'interaction-terminal', id, status: 'COMPLETED' })
  t.same(sse.frames.at(-1), ws.frames.at(-1))
  t.equal((await tp.api.get(id)).status, 404, 'and nothing was kept')
})

t.test('a client that stops reading is paced, and the close waits for it to read the end', async (t) => {
  const n = 1500
  // 1 KiB steps: far more than the socket buffers hold while the client does not read
  const tp = await startStreaming(n, 0, { 'platform.transport.max-backpressure-bytes': 65_536 }, 1024)
  t.teardown(tp.close)
  const created = await tp.api.create({ message: 'many' })
  t.equal(created.body.status, 'COMPLETED')
  const total = created.body.steps.length
  const got: number[] = []
  let terminal: any
  let closeCode = 0
  await new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(`${tp.url.replace('http', 'ws')}${STREAM}?id=${created.body.id}`, {
      headers: { authorization: `Bearer ${ALICE}` }
    })
    ws.on('open', () => {
      // stop reading at once: the kernel buffers fill and uWS reports backpressure
      ;(ws as any)._socket.pause()
      setTimeout(() => (ws as any)._socket.resume(), 1500)
    })
    ws.on('message', (d) => {
      const f = JSON.parse(String(d))
      if (f.type === 'interaction-step') got.push(f.step.seq)
      else terminal = f
    })
    ws.on('close', (code) => {
      closeCode = code
      resolve()
    })
    ws.on('error', reject)
  })
  t.same(got, range(0, total - 1), 'every step once after the client read again')
  t.equal(terminal?.status, 'COMPLETED', 'the 1.5 MB terminal frame after the 1.5 MB completion step')
  t.equal(closeCode, 1000, 'closed only once the client has read the end')
})

t.test('a client that never reads again is closed after the stall time, not buffered', async (t) => {
  const tp = await startStreaming(
    1500,
    0,
    { 'platform.transport.max-backpressure-bytes': 65_536, 'platform.interactions.stream.stall-seconds': 1 },
    1024
  )
  t.teardown(tp.close)
  const created = await tp.api.create({ message: 'many' })
  let code = 0
  const ws = new WebSocket(`${tp.url.replace('http', 'ws')}${STREAM}?id=${created.body.id}`, {
    headers: { authorization: `Bearer ${ALICE}` }
  })
  const closed = new Promise<void>((resolve) => ws.on('close', (c) => ((code = c), resolve())))
  await new Promise((resolve) => ws.on('open', resolve))
  ;(ws as any)._socket.pause()
  await until(() => tp.service.feed.watched === 1)
  const t0 = Date.now()
  await until(() => tp.service.feed.watched === 0, 10_000)
  t.ok(Date.now() - t0 < 5000, 'closed about a second after the client stopped reading')
  ;(ws as any)._socket.resume()
  await closed
  t.not(code, 1000, 'not the normal end: the client knows to resume')
})
