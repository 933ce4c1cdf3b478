import t from 'tap'
import { connect } from 'node:net'
import { startTestPlatform } from '../helpers/platform.js'
import { LINGER_MAX_BYTES, LINGER_MS } from '../../runtime/http/linger.js'

const MiB = 1024 * 1024
const tp = await startTestPlatform(
  { 'platform.server.body-limit-bytes': MiB },
  {
    install: (p) => {
      p.http.post('/echo', (ctx) => ({ got: ctx.body }))
    }
  }
)
t.teardown(tp.close)

t.test("Node's fetch sending 20 MiB to a 1 MiB route gets the 413 body, not EPIPE", async (t) => {
  // a few times: without lingering the reset races the upload and does not lose every time
  for (let i = 0; i < 3; i++) {
    const r = await fetch(tp.url + '/echo', {
      method: 'POST',
      body: Buffer.alloc(20 * MiB, 0x20),
      headers: { 'content-type': 'application/json' }
    })
    t.equal(r.status, 413)
    t.match(await r.json(), { code: 'PLT_ERR_BODY_TOO_LARGE' })
  }
  t.equal((await fetch(tp.url + '/healthz')).status, 200, 'the server keeps serving')
})

t.test('a streamed (chunked) 20 MiB body gets the 413 too', async (t) => {
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= 20 * MiB) {
        c.close()
        return
      }
      sent += MiB
      c.enqueue(new Uint8Array(MiB).fill(0x20))
    }
  })
  const r = await fetch(tp.url + '/echo', { method: 'POST', body, duplex: 'half' } as RequestInit)
  t.equal(r.status, 413)
  t.match(await r.json(), { code: 'PLT_ERR_BODY_TOO_LARGE' })
})

/**
 * Opens a raw connection declaring `declared` bytes, writes `write` bytes;
 * resolves with what came back and when it closed.
 */
function rawUpload(declared: number, write: number): Promise<{ text: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now()
    const s = connect(tp.port, '127.0.0.1')
    let text = ''
    s.on('data', (d) => {
      text += d.toString('latin1')
    })
    s.on('error', () => {
      /* a reset once the bound is hit */
    })
    s.on('close', () => {
      resolve({ text, ms: Date.now() - t0 })
    })
    s.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`)
    let left = write
    const chunk = Buffer.alloc(MiB, 0x20)
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length)
        left -= n
        if (!s.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          s.once('drain', pump)
          return
        }
      }
    }
    pump()
  })
}

t.test('discarding stops after LINGER_MAX_BYTES: the connection is closed', async (t) => {
  const { text, ms } = await rawUpload(4 * LINGER_MAX_BYTES, LINGER_MAX_BYTES + 8 * MiB)
  t.match(text, /^HTTP\/1\.1 413/, 'the 413 went out first')
  t.ok(ms < LINGER_MS, `closed by the byte bound, before the time bound (took ${ms} ms)`)
})

t.test('discarding stops after LINGER_MS: a client that stalls is closed', async (t) => {
  const { text, ms } = await rawUpload(10 * MiB, 2 * MiB)
  t.match(text, /^HTTP\/1\.1 413/)
  t.ok(ms >= LINGER_MS - 100 && ms < LINGER_MS + 2000, `closed after about ${LINGER_MS} ms (took ${ms})`)
})
