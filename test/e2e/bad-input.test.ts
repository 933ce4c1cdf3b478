import t from 'tap'
import { connect } from 'node:net'
import { startTestPlatform } from '../helpers/platform.js'

// Hostile HTTP input while a concurrent request stream must keep succeeding throughout.
const tp = await startTestPlatform(
  { 'platform.server.body-limit-bytes': 64 * 1024 },
  {
    install: (p) => {
      p.http.post('/echo', (ctx) => ({ ok: true, type: typeof ctx.body }))
    }
  }
)
t.teardown(tp.close)

function rawSend(payload: Buffer | string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(tp.port, '127.0.0.1')
    let buf = ''
    s.on('data', (d) => {
      buf += d.toString('latin1')
    })
    s.on('error', () => resolve(buf))
    s.on('close', () => resolve(buf))
    s.setTimeout(1500, () => s.destroy())
    s.write(payload)
  })
}

t.test('bad input gets the right 4xx while a concurrent stream keeps succeeding', async (t) => {
  let stop = false
  const statuses: number[] = []
  const stream = (async () => {
    while (!stop) {
      const r = await fetch(tp.url + '/healthz')
      statuses.push(r.status)
      await r.arrayBuffer()
    }
  })()

  const post = (body: string | Uint8Array<ArrayBuffer>) =>
    fetch(tp.url + '/echo', { method: 'POST', body }).then(
      async (r) => {
        await r.arrayBuffer()
        return r.status
      },
      () => 'reset'
    )
  const results: Record<string, (number | string)[]> = { random: [], truncated: [], deep: [], huge: [] }
  for (let i = 0; i < 30; i++) {
    results.random!.push(
      await post(
        Buffer.from(Array.from({ length: 1 + Math.floor(Math.random() * 2000) }, () => Math.floor(Math.random() * 256)))
      )
    )
    const full = JSON.stringify({ a: [1, 2, 3], b: { c: 'x'.repeat(i * 10) } })
    results.truncated!.push(await post(full.slice(0, Math.max(1, Math.floor(Math.random() * (full.length - 1))))))
  }
  const deep = '{"a":'.repeat(100_000 / 5) + '1' + '}'.repeat(100_000 / 5)
  results.deep!.push(await post('['.repeat(30_000) + ']'.repeat(30_000)))
  results.deep!.push(await post(deep.slice(0, 60_000)))
  results.huge!.push(await post('x'.repeat(10 * 64 * 1024)))
  // not HTTP at all, and a request line that never ends
  const garbage = await rawSend(Buffer.from(Array.from({ length: 4096 }, () => Math.floor(Math.random() * 256))))
  const nonsense = await rawSend('GARBAGE / HTTP/9.9\r\n\r\n')

  stop = true
  await stream
  t.same([...new Set(results.random)], [400], 'random bytes: 400')
  t.same([...new Set(results.truncated)], [400], 'truncated JSON: 400')
  t.same([...new Set(results.deep)], [400], 'deep nesting: 400')
  t.same(results.huge, [413], 'ten times the limit: 413')
  t.notMatch(garbage, /^HTTP\/1\.1 [25]/, 'raw garbage is not served')
  t.notMatch(nonsense, /^HTTP\/1\.1 [25]/, 'an unknown method line is not served')
  t.ok(statuses.length > 20, `the concurrent stream made ${statuses.length} requests`)
  t.same([...new Set(statuses)], [200], 'every concurrent request succeeded')
})
