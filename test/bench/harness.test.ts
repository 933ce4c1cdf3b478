// The benchmark harness runs compiled (dist/bench, worker threads load ws-worker.js), so these
// tests import it from dist: `npm test` compiles first.
import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const dist = (p: string) => join(ROOT, 'dist/bench', p)
const { row } = await import(dist('scenario.js'))
const { checkTargets, loadTargets } = await import(dist('lib/targets.js'))
const { ratiosOf, regressions } = await import(dist('lib/baseline.js'))
const { histIndex, histPercentile, HIST_BUCKETS, median } = await import(dist('lib/stats.js'))
const { markdown, ratioChart } = await import(dist('lib/report.js'))
const { startPeer, startPlatform, sleep } = await import(dist('lib/proc.js'))
const { httpLoad, measureHttp } = await import(dist('lib/http-load.js'))
const { WsLoad } = await import(dist('lib/ws-load.js'))

const tmp = mkdtempSync(join(tmpdir(), 'bench-test-'))
t.teardown(() => {
  rmSync(tmp, { recursive: true, force: true })
})

t.test('row: ratio > 1 means we are better, both directions', async (t) => {
  const rps = row('rps', 'requests/s', 'req/s', 'higher', 100, { a: 50, b: 200, bad: 0 })
  t.same(rps.ratios, { a: 2, b: 0.5 })
  const lat = row('p99_ms', 'p99', 'ms', 'lower', 2, { a: 4 }, false)
  t.same(lat.ratios, { a: 2 })
  t.equal(lat.gate, false)
  t.same(row('x', 'x', '', 'higher', undefined, { a: 1 }).ratios, {}, 'no ratio without our figure')
})

t.test('targets: the committed file loads; ratio and absolute checks; a missing row fails', async (t) => {
  const targets = loadTargets(join(ROOT, 'bench/targets.json'))
  t.ok(targets.some((x: { scenario: string; peer?: string }) => x.scenario === 'http-json' && x.peer === 'uws-raw'))
  const result = {
    scenario: 'http-json',
    description: '',
    notes: [],
    rows: [row('cpu_us_per_req', 'server CPU per request', 'µs', 'lower', 5, { 'uws-raw': 4, 'node-http': 9 })]
  }
  const checks = checkTargets(result, targets)
  t.same(
    checks.map((c: { pass: boolean }) => c.pass),
    [true, false],
    '0.8 >= 0.7 passes, 1.8 < 2 fails'
  )
  const fleet = checkTargets({ scenario: 'ws-fleet', description: '', notes: [], rows: [] }, targets)
  t.equal(fleet.length, 1)
  t.equal(fleet[0].pass, false, 'not measured fails')
  t.equal(fleet[0].actual, undefined)
})

t.test('bench:check flags ratios that fell more than 20%, ignores new ones and scenarios not run', async (t) => {
  const base = {
    date: 'd',
    node: 'v20',
    machine: 'm',
    ratios: { 'a/rps/p': 1.0, 'a/cpu/p': 2.0, 'b/rps/p': 1.0, 'a/gone/p': 1 }
  }
  const now = { 'a/rps/p': 0.85, 'a/cpu/p': 1.5, 'a/new/p': 0.1 }
  const regs = regressions(base, now, new Set(['a']))
  t.same(regs.map((r: { key: string }) => r.key).sort(), ['a/cpu/p', 'a/gone/p'])
  const results = [
    {
      scenario: 'a',
      description: '',
      notes: [],
      rows: [row('rps', '', '', 'higher', 2, { p: 1 }), row('p99', '', '', 'lower', 1, { p: 1 }, false)]
    }
  ]
  t.same(ratiosOf(results), { 'a/rps/p': 2 }, 'ungated rows stay out of the baseline')
})

t.test('histogram percentiles are within 2%', async (t) => {
  const h = new Uint32Array(HIST_BUCKETS)
  for (let us = 1; us <= 1000; us++) h[histIndex(us)]!++
  const p50 = histPercentile(h, 50)
  const p99 = histPercentile(h, 99)
  t.ok(Math.abs(p50 - 500) / 500 < 0.03, `p50 ${p50}`)
  t.ok(Math.abs(p99 - 990) / 990 < 0.03, `p99 ${p99}`)
  t.equal(median([{ v: 3 }, { v: 1 }, { v: 2 }], (x: { v: number }) => x.v).v, 2)
})

t.test('report: a markdown table per scenario and an SVG chart of the ratios', async (t) => {
  const results = [
    {
      scenario: 'http-json',
      description: 'JSON GET',
      notes: ['note'],
      rows: [row('rps', 'requests/s', 'req/s', 'higher', 80, { 'uws-raw': 100 })],
      checks: [{ scenario: 'http-json', row: 'rps', target: 'ratio vs uws-raw >= 0.7', actual: 0.8, pass: true }]
    }
  ]
  const rep = {
    date: '2026-01-01T00:00:00Z',
    mode: 'quick',
    command: 'npm run bench -- --quick',
    machine: { cpu: 'cpu', cores: 2, memoryGb: 4, kernel: 'Linux', node: 'v20', loadTool: 'wrk' },
    results
  }
  const md = markdown(rep)
  t.match(md, '| requests/s | req/s | 80 | 100 | 0.80x |')
  t.match(md, 'PASS `rps` ratio vs uws-raw >= 0.7: 0.80x')
  const svg = ratioChart(rep, [{ scenario: 'http-json', row: 'rps', peer: 'uws-raw', minRatio: 0.7 }])
  t.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/)
  t.match(svg, 'http-json requests/s vs uws-raw')
  t.match(svg, '0.80x')
})

t.test('http load against a peer child process, with its CPU and RSS; stop leaves nothing behind', async (t) => {
  const s = await startPeer(ROOT, 'node-http.js')
  t.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const m = await measureHttp(s, { path: '/', connections: 4, durationSec: 1, root: ROOT })
  t.ok(m.requests > 0, 'requests were served')
  t.equal(m.errors, 0)
  t.ok(m.cpuUsPerReq > 0, 'server CPU per request from /proc')
  t.ok(m.peakRssMb > 1, 'peak RSS from /proc')
  await s.stop()
  t.notOk(existsSync(`/proc/${s.pid}/stat`), 'the server process is gone')
})

t.test('autocannon fallback gives the same fields', async (t) => {
  const s = await startPeer(ROOT, 'node-http.js')
  t.teardown(() => s.stop())
  const r = await httpLoad({ url: s.url + '/', connections: 2, durationSec: 1, root: ROOT, tool: 'autocannon' })
  t.equal(r.tool, 'autocannon')
  t.ok(r.requests > 0)
  t.ok(r.p99Ms >= r.p50Ms)
})

t.test('our server starts from the CLI on port 0 and answers /healthz under load', async (t) => {
  const s = await startPlatform(ROOT, tmp)
  t.teardown(() => s.stop())
  const r = await httpLoad({ url: s.url + '/healthz', connections: 2, durationSec: 1, root: ROOT })
  t.ok(r.requests > 0)
  t.equal(r.errors, 0)
})

t.test('WebSocket load: worker threads, several source addresses, bursts reach every member', async (t) => {
  const s = await startPeer(ROOT, 'ws-fanout.js')
  t.teardown(() => s.stop())
  const { load, ok, failed } = await WsLoad.open({
    url: s.url.replace('http', 'ws') + '/platform/rooms/t',
    connections: 21,
    threads: 2,
    sourceAddrs: ['127.0.0.1', '127.0.0.2', '127.0.0.3']
  })
  t.teardown(() => load.close())
  t.equal(ok, 21)
  t.equal(failed, 0)
  await load.settle(200)
  await load.stats(true)
  t.ok(await load.burst(3, 10), 'every receiver got the last frame of the burst')
  const st = await load.stats(true)
  t.equal(st.deliveries, 3 * 20, 'the sender is not counted; every other member got every frame')
  t.ok(st.p99Us >= st.p50Us)
})

t.test('WebSocket load reports refused upgrades', async (t) => {
  const s = await startPeer(ROOT, 'node-http.js')
  t.teardown(() => s.stop())
  const { load, ok, failed, error } = await WsLoad.open({
    url: s.url.replace('http', 'ws') + '/nope',
    connections: 3,
    threads: 1
  })
  await load.close()
  t.equal(ok, 0)
  t.equal(failed, 3)
  t.match(error, /upgrade refused|closed before upgrade|ECONNRESET/)
  await sleep(1)
})

t.test('POST load with a per-request JSON-RPC id against the official MCP SDK peer', async (t) => {
  const s = await startPeer(ROOT, 'mcp-sdk-v1.js', ['stateless'])
  t.teardown(() => s.stop())
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 987654321,
    method: 'tools/call',
    params: { name: 'add', arguments: { a: 1, b: 2 } }
  })
  const request = {
    method: 'POST',
    body,
    sequence: '987654321',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18'
    }
  }
  for (const tool of ['wrk', 'autocannon'] as const) {
    const r = await httpLoad({ url: s.url + '/mcp', connections: 2, durationSec: 1, root: ROOT, request, tool })
    t.ok(r.requests > 0, `${r.tool}: calls were served`)
    t.equal(r.errors, 0, `${r.tool}: every call answered 2xx`)
  }
})
