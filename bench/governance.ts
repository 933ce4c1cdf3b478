/**
 * Governance benchmark. In-process evaluation latency (p50, p99) of toolkit `rules:`
 * documents with 1, 10 and 100 rules and of a 12-policy native chain (bare evaluation and the
 * full admission gate with decision log and spans), then `/check` over HTTP against a plain JSON
 * route of ours measured in the same run.
 *
 *   npx tsc -p tsconfig.json && node --no-node-snapshot dist/bench/governance.js [--quick]
 *
 * Targets: p99 at most 20 µs at 100 rules (the toolkit publishes 108 µs); `/check` at least half
 * the request rate of the plain route.
 */
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { startInProcess } from './lib/in-process.js'
import { AREAS, installAreas } from '../runtime/areas.js'
import {
  governanceOf,
  buildRulesPolicy,
  GovernanceService,
  GovernanceDecisionLog
} from '../runtime/governance/index.js'
import { aiRequest, type GovernancePolicy, type PolicyContext } from '../runtime/contracts/index.js'

const quick = process.argv.includes('--quick')
const SAMPLES = quick ? 20_000 : 200_000
const WARMUP = quick ? 5_000 : 50_000
const HTTP_SECONDS = quick ? 2 : 5

interface AutocannonResult {
  requests: { average: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

/** A rule set like an operator writes: tool names, regex screens, thresholds, lists; none match the probe. */
function rulesDoc(n: number): Record<string, unknown> {
  const kinds = [
    (i: number) => ({ field: 'tool_name', operator: 'eq', value: `forbidden_tool_${i}` }),
    (i: number) => ({
      field: 'message',
      operator: 'matches',
      value: `(?i)\\b(ignore|disregard)\\s+previous\\s+instructions\\s+${i}\\b`
    }),
    (i: number) => ({ field: 'amount', operator: 'gt', value: 100_000 + i }),
    (i: number) => ({ field: 'user_id', operator: 'in', value: [`banned-${i}`, `blocked-${i}`, `revoked-${i}`] }),
    (i: number) => ({ field: 'message', operator: 'contains', value: `drop table t${i}` })
  ]
  const rules = Array.from({ length: n }, (_, i) => ({
    name: `r${i}`,
    condition: kinds[i % kinds.length]!(i),
    action: 'deny',
    priority: i % 7,
    message: `rule ${i}`
  }))
  return { version: '1.0', name: `bench-${n}`, rules, defaults: { action: 'allow' } }
}

const probe: PolicyContext = {
  phase: 'PRE_ADMISSION',
  request: aiRequest({
    message: 'Please summarise the quarterly report for the finance team.',
    userId: 'alice',
    sessionId: 's-1',
    agentId: 'assistant',
    metadata: { tool_name: 'search', amount: 420, action: 'call_tool' }
  }),
  accumulatedResponse: ''
}

function percentiles(ns: Float64Array): { p50: number; p99: number; mean: number } {
  const s = Float64Array.from(ns).sort()
  let sum = 0
  for (const v of s) sum += v
  return {
    p50: s[Math.floor(s.length * 0.5)]! / 1000,
    p99: s[Math.floor(s.length * 0.99)]! / 1000,
    mean: sum / s.length / 1000
  }
}

/** Per-call latency in µs; each sample brackets one call with hrtime (the timer's own cost is included). */
function measure(fn: () => unknown): { p50: number; p99: number; mean: number } {
  for (let i = 0; i < WARMUP; i++) fn()
  const out = new Float64Array(SAMPLES)
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = process.hrtime.bigint()
    fn()
    out[i] = Number(process.hrtime.bigint() - t0)
  }
  return percentiles(out)
}

const NATIVE_CHAIN = `version: "1.0"
policies:
  - {name: kill, type: kill-switch}
  - {name: deny, type: deny-list, config: {phrases: [drop table, rm -rf], regex: ["ignore\\\\s+previous"]}}
  - {name: pii, type: pii-redaction}
  - {name: len, type: message-length, config: {max-chars: 4000}}
  - {name: rate, type: rate-limit, config: {limit: 1000000000, window-seconds: 1}}
  - {name: conc, type: concurrency-limit, config: {max-concurrent: 1000000000}}
  - {name: hours, type: time-window, config: {start: "00:00", end: "23:59:59", days: [monday, tuesday, wednesday, thursday, friday, saturday, sunday]}}
  - {name: meta, type: metadata-presence, config: {required-keys: [tool_name]}}
  - {name: cost, type: cost-ceiling, config: {budget-usd: 100}}
  - {name: pref, type: preference, config: {phrases: [python 2], prefer: Python 3, reason: EOL}}
  - {name: zscore, type: output-length-zscore}
  - {name: rules, type: message-length, config: {max-chars: 100000}}
`

async function main(): Promise<void> {
  const silent = pino({ level: 'silent' })
  console.log(
    `# governance benchmark  (node ${process.version}, ${SAMPLES} samples after ${WARMUP} warm-up${quick ? ', --quick' : ''})\n`
  )
  console.log('## in-process evaluation, µs per call (no rule matches: every rule is evaluated)\n')
  console.log('| case | p50 µs | p99 µs | mean µs |')
  console.log('|---|---:|---:|---:|')
  const rows: [string, { p50: number; p99: number; mean: number }][] = []
  for (const n of [1, 10, 100]) {
    const p = buildRulesPolicy(rulesDoc(n), 'code:bench')
    if (p.evaluate(probe).decision !== 'admit') throw new Error('probe must not match')
    rows.push([`rules document, ${n} rule${n === 1 ? '' : 's'}`, measure(() => p.evaluate(probe))])
  }
  const svc = new GovernanceService({ logger: silent, decisionLog: new GovernanceDecisionLog(500) })
  const chain: GovernancePolicy[] = svc.parse('yaml', 'yaml:bench.yaml', NATIVE_CHAIN)
  if (chain.length !== 12) throw new Error(`expected 12 policies, got ${chain.length}`)
  rows.push([
    '12-policy native chain, bare evaluate',
    measure(() => {
      for (const p of chain) p.evaluate(probe)
    })
  ])
  svc.setSource('yaml:bench.yaml', chain)
  rows.push([
    '12-policy chain through PolicyAdmissionGate (decision log + spans)',
    measure(() => svc.gate.admit('bench', probe.request))
  ])
  for (const [name, r] of rows)
    console.log(`| ${name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.mean.toFixed(2)} |`)
  const hundred = rows[2]![1]
  console.log(
    `\n100-rule p99 ${hundred.p99.toFixed(2)} µs vs target 20 µs: ${hundred.p99 <= 20 ? 'MET' : 'MISSED'} (the toolkit publishes 108 µs)\n`
  )

  // --- HTTP: /check vs a plain JSON route, same server, same run ---
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-gov-'))
  const { platform, url } = await startInProcess(dataDir, {}, async (p) => {
    p.http.post('/bench/plain', (ctx) => ({ allowed: true, echo: (ctx.body as { action?: unknown }).action ?? null }))
    // the served areas, cut down to scope and governance (in AREAS' order)
    await installAreas(
      p,
      AREAS.filter((a) => a.name === 'scope' || a.name === 'governance')
    )
  })
  const gsvc = governanceOf(platform)!
  gsvc.setSource('yaml:bench.yaml', gsvc.parse('yaml', 'yaml:bench.yaml', NATIVE_CHAIN))
  gsvc.setSource('code:rules', [buildRulesPolicy(rulesDoc(10), 'code:rules')])
  const body = JSON.stringify({
    agent_id: 'assistant',
    action: 'call_tool',
    context: { tool_name: 'search', message: 'summarise the report', amount: 420 }
  })
  const check = (await fetch(`${url}/api/admin/governance/check`, { method: 'POST', body }).then((r) => r.json())) as {
    allowed: boolean
  }
  if (!check.allowed) throw new Error('the /check probe must be allowed')
  const run = async (path: string): Promise<AutocannonResult> =>
    await autocannon({
      url: url + path,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      connections: 32,
      pipelining: 1,
      duration: HTTP_SECONDS,
      workers: 1
    })
  const rates: Record<string, number[]> = { plain: [], check: [] }
  const lat: Record<string, AutocannonResult['latency'][]> = { plain: [], check: [] }
  for (let round = 0; round < 2; round++) {
    for (const [name, path] of [
      ['plain', '/bench/plain'],
      ['check', '/api/admin/governance/check']
    ] as const) {
      const r = await run(path)
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`)
      rates[name]!.push(r.requests.average)
      lat[name]!.push(r.latency)
    }
  }
  await platform.close()
  rmSync(dataDir, { recursive: true, force: true })
  const avg = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
  console.log(
    `## HTTP (autocannon in a worker thread, 32 connections, ${HTTP_SECONDS}s x 2 rounds each, alternating; 13-policy chain behind /check)\n`
  )
  console.log('| route | req/s | p50 ms | p99 ms |')
  console.log('|---|---:|---:|---:|')
  for (const name of ['plain', 'check'] as const) {
    const l = lat[name]!
    console.log(
      `| ${name === 'plain' ? 'POST /bench/plain (plain JSON route)' : 'POST /api/admin/governance/check'} | ${Math.round(avg(rates[name]!))} | ${avg(l.map((x) => x.p50)).toFixed(2)} | ${avg(l.map((x) => x.p99)).toFixed(2)} |`
    )
  }
  const ratio = avg(rates.check!) / avg(rates.plain!)
  console.log(
    `\n/check rate = ${(ratio * 100).toFixed(1)}% of the plain route (target >= 50%): ${ratio >= 0.5 ? 'MET' : 'MISSED'}`
  )
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
