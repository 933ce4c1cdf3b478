import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { PlatformError, isPlatformError } from '../../runtime/contracts/index.js'
import { CONFIG_ERRORS } from '../../runtime/config/index.js'
import { HTTP_ERRORS } from '../../runtime/http/index.js'
import { TrustedProxies, peerAddress } from '../../runtime/http/trusted-proxies.js'

const tp = await startTestPlatform(
  {
    'platform.server.body-limit-bytes': 1024,
    'platform.server.cors.origins': ['http://allowed.example'],
    // this host's loopback plays the proxy; 10.9.0.0/16 a second tier of proxies behind it
    'platform.server.trusted-proxies': ['127.0.0.1/32', '10.9.0.0/16', '2001:db8:ffff::/48']
  },
  {
    install: (p) => {
      p.http.post('/echo', (ctx) => ({ got: ctx.body }))
      p.http.get('/whoami', (ctx) => ({ address: ctx.address() }))
      // asked after an await: uWS has released the request by then
      p.http.get('/whoami-later', async (ctx) => {
        await new Promise((r) => setImmediate(r))
        return { address: ctx.address() }
      })
      p.http.get('/items/{id}', (ctx) => ({ id: ctx.params.id, q: ctx.query.get('q') }))
      p.http.route('PUT', '/items/{id}', () => ({ put: true }), { body: 'json' })
      p.http.get('/boom', () => {
        throw new Error('kaput')
      })
      p.http.get('/teapot', () => {
        throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: 'x', detail: 'bad' })
      })
      p.http.get('/internal', () => {
        throw new PlatformError(HTTP_ERRORS.RESPONSE_TOO_LARGE, { limit: 1 })
      })
      p.http.get('/slow', async () => {
        await new Promise((r) => setTimeout(r, 50))
        return { slow: true }
      })
    }
  }
)
t.teardown(tp.close)
const u = (p: string) => tp.url + p

/** Sends raw bytes and resolves with the whole response text (for malformed requests fetch refuses to make). */
function raw(payload: string | Buffer, ms = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(tp.port, '127.0.0.1')
    let buf = ''
    s.on('data', (d) => {
      buf += d.toString('latin1')
    })
    s.on('error', (e) => {
      if (buf !== '') resolve(buf)
      else reject(e)
    })
    s.on('close', () => resolve(buf))
    s.setTimeout(ms, () => s.destroy())
    s.write(payload)
  })
}

t.test('route with path parameter and query', async (t) => {
  const r = await fetch(u('/items/a%20b?q=1'))
  t.equal(r.status, 200)
  t.same(await r.json(), { id: 'a b', q: '1' })
})

t.test('unknown path is 404 from the catalogue', async (t) => {
  const r = await fetch(u('/nope'))
  t.equal(r.status, 404)
  t.same(await r.json(), { error: 'Not found', code: 'PLT_ERR_NOT_FOUND' })
})

t.test('known path with another method is 405 with Allow', async (t) => {
  const r = await fetch(u('/items/1'), { method: 'DELETE' })
  t.equal(r.status, 405)
  t.equal(r.headers.get('allow'), 'GET, PUT, OPTIONS')
  const b = (await r.json()) as { code: string }
  t.equal(b.code, 'PLT_ERR_METHOD_NOT_ALLOWED')
})

t.test('JSON body round trip', async (t) => {
  const r = await fetch(u('/echo'), {
    method: 'POST',
    body: JSON.stringify({ a: [1, 2, { b: 'c' }] }),
    headers: { 'content-type': 'application/json' }
  })
  t.same(await r.json(), { got: { a: [1, 2, { b: 'c' }] } })
})

t.test('malformed and truncated JSON is 400', async (t) => {
  for (const body of ['{"a":', '{nope}', '[1,2', '\u0000\u0001garbage']) {
    const r = await fetch(u('/echo'), { method: 'POST', body })
    t.equal(r.status, 400, body)
    t.equal(((await r.json()) as { code: string }).code, 'PLT_ERR_MALFORMED_JSON')
  }
})

t.test('random bytes are 400, never 500', async (t) => {
  for (let i = 0; i < 20; i++) {
    const body = Buffer.from(Array.from({ length: 200 }, () => Math.floor(Math.random() * 256)))
    const r = await fetch(u('/echo'), { method: 'POST', body })
    t.equal(r.status, 400)
  }
})

t.test('empty body on a JSON route is 400', async (t) => {
  const r = await fetch(u('/echo'), { method: 'POST', body: '' })
  t.equal(r.status, 400)
  t.equal(((await r.json()) as { code: string }).code, 'PLT_ERR_EMPTY_BODY')
})

t.test('JSON nested 100 000 deep is 400 without crashing', async (t) => {
  const tp2 = await startTestPlatform(
    { 'platform.server.body-limit-bytes': 1_000_000 },
    {
      install: (p) => {
        p.http.post('/echo', (ctx) => ({ got: ctx.body }))
      }
    }
  )
  t.teardown(tp2.close)
  const body = '['.repeat(100_000) + ']'.repeat(100_000)
  const r = await fetch(tp2.url + '/echo', { method: 'POST', body })
  t.equal(r.status, 400)
  t.equal(((await r.json()) as { code: string }).code, 'PLT_ERR_JSON_TOO_DEEP')
  const ok = await fetch(tp2.url + '/healthz')
  t.equal(ok.status, 200)
})

t.test('a body ten times the limit is 413 and the server keeps serving', async (t) => {
  const big = 'x'.repeat(10 * 1024)
  const r = await fetch(u('/echo'), { method: 'POST', body: JSON.stringify({ big }) }).catch((e) => e)
  if (r instanceof Response) {
    t.equal(r.status, 413)
    t.equal(((await r.json()) as { code: string }).code, 'PLT_ERR_BODY_TOO_LARGE')
  } else {
    t.fail('connection failed before the 413 arrived: ' + String(r))
  }
  // chunked body without content-length crosses the limit mid-stream
  const chunked = await raw(
    `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${(4000).toString(16)}\r\n${'y'.repeat(4000)}\r\n`
  )
  t.match(chunked, /^HTTP\/1\.1 413/)
  t.equal((await fetch(u('/healthz'))).status, 200)
})

t.test('X-Request-Id is echoed or minted', async (t) => {
  const a = await fetch(u('/healthz'), { headers: { 'x-request-id': 'abc-123' } })
  t.equal(a.headers.get('x-request-id'), 'abc-123')
  const b = await fetch(u('/healthz'))
  const b2 = await fetch(u('/healthz'))
  t.match(b.headers.get('x-request-id'), /^[0-9a-f]{12}-[0-9a-z]+$/)
  t.not(b.headers.get('x-request-id'), b2.headers.get('x-request-id'), 'minted ids are unique')
  const c = await fetch(u('/healthz'), { headers: { 'x-request-id': 'x'.repeat(300) } })
  t.not(c.headers.get('x-request-id'), 'x'.repeat(300))
  const d = await fetch(u('/healthz'), { headers: { 'x-request-id': 'node-1.req_42:a-b' } })
  t.equal(d.headers.get('x-request-id'), 'node-1.req_42:a-b', 'letters, digits and . _ : - are echoed')
})

t.test('an X-Request-Id outside the safe pattern is replaced, in the answer and in the logs', async (t) => {
  const hostile = '"}{"level":60'
  for (const given of [hostile, 'a b', 'x'.repeat(129), 'a/b', '<script>']) {
    const r = await fetch(u('/healthz'), { headers: { 'x-request-id': given } })
    t.match(r.headers.get('x-request-id'), /^[0-9a-f]{12}-[0-9a-z]+$/, `${given.slice(0, 20)} replaced by a minted id`)
  }
  const r = await fetch(u('/boom'), { headers: { 'x-request-id': hostile } })
  const minted = r.headers.get('x-request-id')
  t.not(minted, hostile)
  const rec = tp.logs.find((l) => l.msg === 'route handler failed' && l.requestId === minted)
  t.ok(rec, 'the log record carries the minted id')
  t.notOk(
    tp.logs.some((l) => l.requestId === hostile),
    'the hostile id never reaches the logs'
  )
})

t.test('a throwing handler is a 500 from the catalogue and is logged', async (t) => {
  const r = await fetch(u('/boom'))
  t.equal(r.status, 500)
  t.same(await r.json(), { error: 'Internal server error', code: 'PLT_ERR_INTERNAL' })
  t.ok(tp.logs.some((l) => l.msg === 'route handler failed'))
})

t.test('an internal code is answered as any unexpected throw: its text stays in the log', async (t) => {
  const r = await fetch(u('/internal'))
  t.equal(r.status, 500)
  t.same(await r.json(), { error: 'Internal server error', code: 'PLT_ERR_INTERNAL' })
  const rec = tp.logs.find((l) => l.msg === 'route handler failed' && l.route === '/internal')
  t.match(rec?.err, { code: 'PLT_ERR_RESPONSE_TOO_LARGE' }, 'the log keeps the internal code')
})

t.test('a PlatformError keeps its status, code and message', async (t) => {
  const r = await fetch(u('/teapot'))
  t.equal(r.status, 400)
  t.same(await r.json(), { error: "Invalid query parameter 'x': bad", code: 'PLT_ERR_INVALID_QUERY' })
})

t.test('CORS: allowed origin gets headers, preflight answers, denied origin gets none', async (t) => {
  const a = await fetch(u('/healthz'), { headers: { origin: 'http://allowed.example' } })
  t.equal(a.headers.get('access-control-allow-origin'), 'http://allowed.example')
  const b = await fetch(u('/healthz'), { headers: { origin: 'http://evil.example' } })
  t.equal(b.headers.get('access-control-allow-origin'), null)
  const pre = await fetch(u('/items/1'), {
    method: 'OPTIONS',
    headers: {
      origin: 'http://allowed.example',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'content-type'
    }
  })
  t.equal(pre.status, 204)
  t.equal(pre.headers.get('access-control-allow-methods'), 'GET, PUT, OPTIONS')
  t.equal(pre.headers.get('access-control-allow-headers'), 'content-type')
  const denied = await fetch(u('/items/1'), { method: 'OPTIONS', headers: { origin: 'http://evil.example' } })
  t.equal(denied.status, 403)
  const plain = await fetch(u('/items/1'), { method: 'OPTIONS' })
  t.equal(plain.status, 204)
  t.equal(plain.headers.get('allow'), 'GET, PUT, OPTIONS')
})

t.test('a client that goes away mid-request does not break the server', async (t) => {
  const ac = new AbortController()
  const p = fetch(u('/slow'), { signal: ac.signal }).catch(() => 'aborted')
  setTimeout(() => ac.abort(), 10)
  t.equal(await p, 'aborted')
  await new Promise((r) => setTimeout(r, 80))
  t.equal((await fetch(u('/healthz'))).status, 200)
})

t.test('request metrics are labelled by route pattern, never raw URL', async (t) => {
  await fetch(u('/items/secret-id-42'))
  const text = await (await fetch(u('/metrics'))).text()
  t.match(text, /platform_http_requests_total\{route="\/items\/\{id\}",method="GET",status="200"\}/)
  t.notMatch(text, /secret-id-42/)
  t.match(text, /platform_http_request_duration_seconds_bucket\{le="0.0001",route="\/items\/\{id\}",method="GET"\}/)
  t.match(text, /process_cpu_user_seconds_total/)
})

/** The client address a request is counted by, sent from `from` with these X-Forwarded-For lines. */
function whoami(forwardedFor: string | string[] | undefined, from = '127.0.0.1', path = '/whoami'): Promise<string> {
  return new Promise((resolve, reject) => {
    // an array goes out as one header line per entry, as a proxy that adds its own line sends it
    const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }
    const req = request(
      { host: '127.0.0.1', port: tp.port, path, headers, localAddress: from, agent: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => resolve((JSON.parse(text) as { address: string }).address))
      }
    )
    req.on('error', reject)
    req.end()
  })
}

t.test('behind a trusted proxy the client is the right-most X-Forwarded-For entry that is no proxy', async (t) => {
  t.equal(await whoami(undefined), '127.0.0.1', 'no header: the peer')
  t.equal(await whoami('203.0.113.7'), '203.0.113.7')
  t.equal(await whoami('203.0.113.7', '127.0.0.1', '/whoami-later'), '203.0.113.7', 'also after an await')
  t.equal(await whoami('198.51.100.1, 203.0.113.7'), '203.0.113.7', 'a left-most entry is only a claim')
  t.equal(await whoami('203.0.113.7, 10.9.4.4'), '203.0.113.7', 'a trusted proxy on the way is passed over')
  t.equal(await whoami(['198.51.100.1', '203.0.113.7']), '203.0.113.7', 'every header line counts, in order')
  t.equal(await whoami('2001:db8::5'), '2001:db8::5', 'an IPv6 client')
  t.equal(await whoami('2001:db8::5, 2001:db8:ffff::1'), '2001:db8::5', 'an IPv6 proxy passed over')
  t.equal(await whoami('10.9.0.1, 10.9.0.2'), '10.9.0.1', 'only proxies: the farthest')
  for (const bad of ['nginx', '203.0.113.7, unknown', '203.0.113.7:4711', '', '203.0.113.7,,'])
    t.equal(await whoami(bad), '127.0.0.1', `unreadable ${JSON.stringify(bad)}: the peer`)
  t.equal(await whoami('203.0.113.7', '127.0.0.2'), '127.0.0.2', 'from a peer that is no proxy the header is ignored')
})

t.test('peers as uWS writes them: IPv6 in full, IPv4 mapped on a dual-stack socket', async (t) => {
  const loopback = new TrustedProxies(['127.0.0.1/32', '::1/128'])
  t.equal(loopback.client('0000:0000:0000:0000:0000:0000:0000:0001', '203.0.113.7'), '203.0.113.7')
  t.equal(loopback.client('0000:0000:0000:0000:0000:ffff:7f00:0001', '203.0.113.7'), '203.0.113.7')
  t.equal(
    loopback.client('0000:0000:0000:0000:0000:ffff:7f00:0002', '203.0.113.7'),
    '0000:0000:0000:0000:0000:ffff:7f00:0002'
  )
  const none = new TrustedProxies([])
  t.equal(none.client('127.0.0.1', '203.0.113.7'), '127.0.0.1', 'none configured: the header is never read')
  // the socket's text as uWS hands it over: the bytes of an ASCII address
  for (const a of ['127.0.0.1', '0000:0000:0000:0000:0000:ffff:7f00:0001'])
    t.equal(peerAddress({ getRemoteAddressAsText: () => new TextEncoder().encode(a).buffer }), a)
})

t.test(
  'a malformed platform.server.trusted-proxies entry stops start-up naming the key, creating nothing',
  async (t) => {
    const parent = mkdtempSync(join(tmpdir(), 'platform-proxies-'))
    t.teardown(() => rmSync(parent, { recursive: true, force: true }))
    const dataDir = join(parent, 'data')
    for (const entry of ['10.0.0.0/33', 'nginx', '::1/129', '10.0.0.0/8x', '10.0.0.0/', 'fe80::1%eth0']) {
      const err = await startTestPlatform({
        'platform.server.trusted-proxies': ['127.0.0.1', entry],
        'platform.data-dir': dataDir
      }).then(
        (started) => started.close().then(() => undefined),
        (e: unknown) => e
      )
      t.ok(isPlatformError(err, CONFIG_ERRORS.CONFIG_INVALID), `${entry}: a configuration error (the CLI exits 78)`)
      t.match((err as Error).message, `config key 'platform.server.trusted-proxies' holds ${JSON.stringify(entry)}`)
    }
    t.notOk(existsSync(dataDir), 'no data directory was made')
  }
)
