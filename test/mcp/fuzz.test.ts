import t from 'tap'
import { startMcp, meta, MODERN } from './helpers.js'

// A small deterministic PRNG so a failure is reproducible from the printed case index.
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/read',
  'resources/list',
  'prompts/get',
  'server/discover',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'x/y',
  '',
  'TOOLS/LIST'
]
const ALLOWED = new Set([200, 202, 204, 400, 403, 404, 405, 406, 409, 413, 415, 503])

t.test(
  '10 000 malformed JSON-RPC bodies and header combinations get well-formed errors; the server stays up',
  async (t) => {
    const m = await startMcp({ 'platform.mcp.body-limit-bytes': 16_384 })
    t.teardown(m.tp.close)
    const r = rng(20261121)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
    const junkValue = (depth = 0): unknown => {
      const k = Math.floor(r() * (depth > 2 ? 6 : 9))
      switch (k) {
        case 0:
          return null
        case 1:
          return r() < 0.5
        case 2:
          return Math.floor(r() * 2e9) - 1e9
        case 3:
          return r() * 1e-3
        case 4:
          return 'x'.repeat(Math.floor(r() * 20))
        case 5:
          return pick(['2.0', '1.0', MODERN, '2025-11-25', '', '\u0000', '=?base64?!!?='])
        case 6:
          return [junkValue(depth + 1), junkValue(depth + 1)]
        case 7:
          return { a: junkValue(depth + 1), _meta: r() < 0.5 ? meta() : junkValue(depth + 1) }
        default:
          return {
            name: pick(['test_simple_text', 'test_error_handling', 'nope', 5]),
            uri: pick(['test://static-text', 'x', 1]),
            arguments: junkValue(depth + 1),
            _meta: r() < 0.5 ? meta() : junkValue(depth + 1),
            taskId: junkValue(depth + 1),
            inputResponses: junkValue(depth + 1),
            requestState: junkValue(depth + 1)
          }
      }
    }
    const body = (): string => {
      const k = Math.floor(r() * 8)
      if (k === 0)
        return Buffer.from(Array.from({ length: Math.floor(r() * 64) }, () => Math.floor(r() * 256))).toString('latin1')
      if (k === 1) return JSON.stringify(junkValue()).slice(0, Math.floor(r() * 40))
      if (k === 2) return JSON.stringify(junkValue())
      if (k === 3) return '['.repeat(200) + ']'.repeat(200)
      const msg: Record<string, unknown> = {}
      if (r() < 0.9) msg.jsonrpc = r() < 0.85 ? '2.0' : junkValue()
      if (r() < 0.8) msg.id = r() < 0.7 ? Math.floor(r() * 1000) : junkValue()
      if (r() < 0.9) msg.method = r() < 0.85 ? pick(METHODS) : junkValue()
      if (r() < 0.8) msg.params = junkValue()
      if (r() < 0.1) msg.result = junkValue()
      return JSON.stringify(k === 4 && r() < 0.5 ? [msg, msg] : msg)
    }
    const headers = (): Record<string, string> => {
      const h: Record<string, string> = {}
      if (r() < 0.9)
        h['content-type'] = pick([
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded'
        ])
      if (r() < 0.8)
        h.accept = pick([
          'application/json, text/event-stream',
          'application/json',
          'text/event-stream',
          'text/html',
          '*/*'
        ])
      if (r() < 0.3)
        h['mcp-session-id'] = pick(['nope', 'a b', '00000000-0000-0000-0000-000000000000', 'x'.repeat(100)])
      if (r() < 0.6) h['mcp-protocol-version'] = pick([MODERN, '2025-11-25', '2024-11-05', 'v999', ''])
      if (r() < 0.5) h['mcp-method'] = pick(METHODS)
      if (r() < 0.3) h['mcp-name'] = pick(['test_simple_text', '=?base64?dGVzdA==?=', '=?base64?!!?=', '  x  '])
      if (r() < 0.1) h.origin = pick(['http://evil.example.com', 'http://localhost:1', 'null'])
      return h
    }

    const N = 10_000
    const problems: string[] = []
    let i = 0
    const worker = async (): Promise<void> => {
      while (i < N && problems.length < 5) {
        const n = i++
        const method = r() < 0.97 ? 'POST' : pick(['GET', 'DELETE', 'PUT'])
        const h = headers()
        const b = method === 'GET' ? undefined : body()
        let res: Response
        try {
          res = await fetch(m.url, {
            method,
            headers: method === 'GET' ? { ...h, accept: 'application/json' } : h,
            body: b,
            signal: AbortSignal.timeout(10_000)
          })
        } catch (err) {
          problems.push(`#${n} request failed: ${(err as Error).message}`)
          continue
        }
        const text = await res.text()
        if (!ALLOWED.has(res.status)) {
          problems.push(`#${n} status ${res.status}: ${text.slice(0, 200)} body=${b?.slice(0, 200)}`)
          continue
        }
        if (text === '') continue
        const ct = res.headers.get('content-type') ?? ''
        const messages = ct.includes('text/event-stream')
          ? text
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6))
          : [text]
        for (const raw of messages) {
          let msg: any
          try {
            msg = JSON.parse(raw)
          } catch {
            problems.push(`#${n} not JSON: ${raw.slice(0, 200)}`)
            break
          }
          const ok =
            msg.jsonrpc === '2.0' &&
            (msg.method !== undefined || 'result' in msg !== 'error' in msg) &&
            (msg.error === undefined || (Number.isInteger(msg.error.code) && typeof msg.error.message === 'string'))
          if (!ok) problems.push(`#${n} malformed JSON-RPC: ${raw.slice(0, 200)}`)
          if (msg.error !== undefined && res.status === 200 && msg.id === undefined)
            problems.push(`#${n} error without id: ${raw.slice(0, 200)}`)
        }
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    t.same(problems, [], 'every response is a well-formed JSON-RPC message with an expected status')
    t.equal(i >= N, true, `${N} cases sent`)
    const health = await fetch(`${m.base}/healthz`)
    t.equal(health.status, 200, 'server still up')
    const ok = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } })
    })
    t.equal(ok.status, 200, 'and still serving MCP')
  }
)

t.test('malformed WebSocket frames get well-formed errors on the same socket', async (t) => {
  const { default: WebSocket } = await import('ws')
  const m = await startMcp({}, { fixtures: false })
  t.teardown(m.tp.close)
  const ws = new WebSocket(m.url.replace('http', 'ws'))
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  const frames = [
    '',
    '{',
    'null',
    '[]',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    '{"jsonrpc":"2.0"}',
    '{"jsonrpc":"2.0","id":{},"method":"x"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}',
    '{"jsonrpc":"2.0","id":3,"method":"initialize","params":5}',
    '"\\u0000"',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}'
  ]
  const got: any[] = []
  ws.on('message', (d) => {
    got.push(JSON.parse(String(d)))
  })
  for (let i = 0; i < 500; i++) ws.send(frames[i % frames.length]!)
  ws.send(Buffer.from([0xff, 0x00, 0x12]), { binary: true })
  ws.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'last',
      method: 'server/discover',
      params: {
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
      }
    })
  )
  while (!got.some((g) => g.id === 'last')) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(got.length >= 500, 'every frame answered')
  t.ok(
    got.every(
      (g) =>
        g.jsonrpc === '2.0' &&
        'result' in g !== 'error' in g &&
        (g.error === undefined || Number.isInteger(g.error.code))
    ),
    'all well-formed'
  )
  t.equal(got.find((g) => g.id === 'last').result.resultType, 'complete', 'the socket still works')
  ws.close()
})
