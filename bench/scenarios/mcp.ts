import { join } from 'node:path'
import { row, type RunOptions, type Scenario, type ScenarioResult, type ResultRow } from '../scenario.js'
import { startPeer, startServer, type ServerProcess } from '../lib/proc.js'
import { httpLoad, measureHttp, type MeasuredHttp } from '../lib/http-load.js'
import { cpSync, mkdirSync } from 'node:fs'

const CONNECTIONS = 64
const TIERS = ['inline', 'isolate', 'worker'] as const
const SESSION_VERSION = '2025-06-18'
const MODERN = '2026-07-28'
const ACCEPT = 'application/json, text/event-stream'
const SEQ = 987654321

interface Target {
  name: string
  server: ServerProcess
  path: string
  dialect: 'session' | 'stateless'
  tool: string
}

/**
 * MCP `tools/call`: our server (the real CLI with the bench plugins of bench/plugins, one
 * per sandbox tier) in both dialects, against the official TypeScript SDK: v1 on node:http with a
 * transport reused per session (its fastest configuration), v1 stateless (server + transport per
 * request), v2 `createMcpHandler` (2026-07-28 stateless). All serve the same `add` tool; wrk repeats
 * one `tools/call` POST on 64 connections.
 */
const scenario: Scenario = {
  name: 'mcp',
  description: `MCP tools/call (add), ${CONNECTIONS} connections: platform (inline, isolate, worker tools; session and stateless dialects) vs the official SDK (v1 session, v1 stateless, v2 createMcpHandler)`,
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const servers: ServerProcess[] = []
    const notes: string[] = []
    try {
      const platformRoot = process.env.BENCH_PLATFORM_ROOT ?? opts.root
      const grants = [
        'platform.plugins.bench-inline={"sandbox":"inline","limits":{"concurrency":64}}',
        'platform.plugins.bench-worker={"sandbox":"worker"}',
        'platform.plugins.bench-isolate={"limits":{"concurrency":64}}'
      ]
      const data = join(opts.tmpDir, 'data')
      mkdirSync(data, { recursive: true })
      // only our three tier plugins (bench/plugins also holds other benchmarks' plugins)
      const plugins = join(opts.tmpDir, 'plugins')
      for (const tier of TIERS)
        cpSync(join(opts.root, 'bench/plugins', `bench-${tier}`), join(plugins, `bench-${tier}`), { recursive: true })
      const ours = await startServer({
        name: 'platform',
        args: [
          '--no-node-snapshot',
          join(platformRoot, 'bin/platform.js'),
          'serve',
          '--port',
          '0',
          '--host',
          '127.0.0.1',
          '--data',
          data,
          '--plugins',
          plugins,
          '--log-level',
          'warn',
          ...grants.flatMap((g) => ['--set', g])
        ],
        cwd: platformRoot
      })
      servers.push(ours)
      const v1 = await startPeer(opts.root, 'mcp-sdk-v1.js', ['session'])
      const v1s = await startPeer(opts.root, 'mcp-sdk-v1.js', ['stateless'])
      const v2 = await startPeer(opts.root, 'mcp-sdk-v2.js')
      servers.push(v1, v1s, v2)

      const targets: Target[] = []
      for (const tier of TIERS) {
        targets.push({
          name: `session.${tier}`,
          server: ours,
          path: '/platform/mcp',
          dialect: 'session',
          tool: `add_${tier}`
        })
        targets.push({
          name: `stateless.${tier}`,
          server: ours,
          path: '/platform/mcp',
          dialect: 'stateless',
          tool: `add_${tier}`
        })
      }
      targets.push({ name: 'sdk-v1-session', server: v1, path: '/mcp', dialect: 'session', tool: 'add' })
      targets.push({ name: 'sdk-v1-stateless', server: v1s, path: '/mcp', dialect: 'session', tool: 'add' })
      targets.push({ name: 'sdk-v2', server: v2, path: '/mcp', dialect: 'stateless', tool: 'add' })

      // nine subjects: the quick suite gives each 3 s so the whole suite stays under 3 minutes
      const durationSec = opts.quick ? Math.min(3, opts.durationSec) : opts.durationSec
      const res = new Map<string, MeasuredHttp>()
      for (const t of targets) {
        if (opts.signal.aborted) throw new Error('aborted')
        const request = await prepare(t, t.name === 'sdk-v1-stateless')
        if (typeof request === 'string') {
          notes.push(`${t.name}: not measured (${request})`)
          opts.log(`  ${t.name}: ${request}`)
          continue
        }
        const url = t.server.url + t.path
        await httpLoad({
          url,
          connections: CONNECTIONS,
          durationSec: opts.warmupSec,
          root: opts.root,
          request,
          signal: opts.signal
        })
        const m = await measureHttp(t.server, {
          path: t.path,
          connections: CONNECTIONS,
          durationSec,
          root: opts.root,
          request,
          signal: opts.signal
        })
        opts.log(
          `  ${t.name.padEnd(18)} ${Math.round(m.rps)} calls/s, p50 ${m.p50Ms.toFixed(2)} ms, p99 ${m.p99Ms.toFixed(2)} ms, ${m.cpuUsPerReq.toFixed(1)} CPU µs/call (${(m.cpuCores * 100).toFixed(0)}% CPU)${m.errors > 0 ? `, ${m.errors} errors` : ''}`
        )
        if (m.errors > 0) notes.push(`${t.name}: ${m.errors} failed or timed-out requests during the measured window`)
        if (m.requests === 0) {
          notes.push(`${t.name}: no call completed within the window (not measured)`)
          continue
        }
        if (m.p99Ms > 1000)
          notes.push(`${t.name}: p99 ${Math.round(m.p99Ms)} ms: calls stalled for seconds; its figures are unreliable`)
        res.set(t.name, m)
      }

      const peerNames = ['sdk-v1-session', 'sdk-v1-stateless', 'sdk-v2'].filter((n) => res.has(n))
      const peersOf = (f: (m: MeasuredHttp) => number, best: 'max' | 'min'): Record<string, number> => {
        const out: Record<string, number> = {}
        for (const n of peerNames) out[n] = f(res.get(n)!)
        const vals = Object.values(out).filter((v) => Number.isFinite(v) && v > 0)
        if (vals.length > 0) out['sdk-best'] = best === 'max' ? Math.max(...vals) : Math.min(...vals)
        return out
      }
      // ours against the best SDK configuration (checked against the targets), every configuration
      // in one extra row. Not gated by bench:check: on the shared 2-core box the SDK's CPU per call
      // swung 330-2 000 µs between runs (multi-second stalls at 64 connections), so the ratio moved
      // 25-50% from run to run; gate it (drop `, false`) on a quiet dedicated machine
      const best = (f: (m: MeasuredHttp) => number, b: 'max' | 'min'): Record<string, number> => {
        const v = peersOf(f, b)['sdk-best']
        return v === undefined ? {} : { 'sdk-best': v }
      }
      const rows: ResultRow[] = []
      for (const dialect of ['session', 'stateless']) {
        for (const tier of TIERS) {
          const m = res.get(`${dialect}.${tier}`)
          rows.push(
            row(
              `${dialect}.${tier}.cpu_us_per_call`,
              `${dialect} dialect, ${tier} tool: server CPU per call (ratio = calls per CPU-second)`,
              'µs',
              'lower',
              m?.cpuUsPerReq,
              best((x) => x.cpuUsPerReq, 'min'),
              false
            )
          )
          rows.push(
            row(
              `${dialect}.${tier}.rps`,
              `${dialect} dialect, ${tier} tool: calls/s`,
              '/s',
              'higher',
              m?.rps,
              peersOf((x) => x.rps, 'max'),
              false
            )
          )
        }
      }
      const si = res.get('session.inline')
      rows.push(
        row(
          'session.inline.cpu_us_per_call.each',
          'session dialect, inline tool: server CPU per call vs each SDK configuration',
          'µs',
          'lower',
          si?.cpuUsPerReq,
          peersOf((x) => x.cpuUsPerReq, 'min'),
          false
        )
      )
      notes.push(
        `load: wrk -t1 -c${CONNECTIONS}, one tools/call POST repeated (session dialect: after initialize, with Mcp-Session-Id; stateless: ${MODERN} headers and _meta); ${opts.warmupSec} s warm-up + ${durationSec} s per subject`
      )
      notes.push(
        "sdk-best = the best SDK configuration in this run (lowest CPU per call, highest calls/s); the isolate tier's sandbox process is counted in our server CPU"
      )
      notes.push(
        `server CPU (1 core = 100%): ${[...res].map(([k, m]) => `${k} ${(m.cpuCores * 100).toFixed(0)}%`).join(', ')}`
      )
      return { scenario: 'mcp', description: this.description, rows, notes, details: Object.fromEntries(res) }
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
    }
  }
}

/** The repeated request for one subject; for the session dialect, opens the session first. */
type Request = { method: string; body: string; headers: Record<string, string>; sequence: string }

async function prepare(t: Target, noSession: boolean): Promise<Request | string> {
  const url = t.server.url + t.path
  // ids differ per request (the load tool replaces SEQ by a counter):
  // one session's concurrent requests must not share an id
  const call = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: SEQ,
      method: 'tools/call',
      params: { name: t.tool, arguments: { a: 1, b: 2 }, ...extra }
    })
  if (t.dialect === 'stateless') {
    const headers = {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': t.tool
    }
    const body = call({
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }
      }
    })
    return await probe(url, headers, body)
  }
  const base = { 'content-type': 'application/json', accept: ACCEPT }
  if (noSession) return await probe(url, { ...base, 'mcp-protocol-version': SESSION_VERSION }, call())
  const init = await fetch(url, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: SESSION_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } }
    })
  })
  await init.text()
  const sid = init.headers.get('mcp-session-id')
  if (!init.ok || sid === null)
    return `initialize answered ${init.status}${sid === null ? ' without Mcp-Session-Id' : ''}`
  const headers = { ...base, 'mcp-session-id': sid, 'mcp-protocol-version': SESSION_VERSION }
  await (
    await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
    })
  ).text()
  return await probe(url, headers, call())
}

/** Sends the request once: it must succeed with a result before it is worth repeating. */
async function probe(url: string, headers: Record<string, string>, body: string): Promise<Request | string> {
  try {
    const r = await fetch(url, { method: 'POST', headers, body: body.replace(String(SEQ), '1') })
    const text = await r.text()
    if (!r.ok || !text.includes('"result"')) return `tools/call answered ${r.status}: ${text.slice(0, 160)}`
    return { method: 'POST', body, headers, sequence: String(SEQ) }
  } catch (err) {
    return `tools/call failed: ${(err as Error).message}`
  }
}

export default scenario
