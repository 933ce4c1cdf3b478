/**
 * Per-event cost of a plugin runtime's stream in the isolate tier (in its sandbox process, the
 * default, and in-process): a runtime yielding N short text deltas, read by the host as the plugin
 * yields them (pulled in windows) against the same events handed back as one array when the
 * plugin ends (how plugin runtimes worked before they streamed). Wall µs per event and host CPU
 * µs per event (in-process, the isolate's own CPU is in the host's figure).
 *
 *   npx tsc -p tsconfig.json && node --no-node-snapshot dist/bench/runtime-stream.js [--quick]
 *
 * Prints a table, then one JSON line (`{"bench":"runtime-stream",...}`).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadIsolate } from '../runtime/plugins/isolate/index.js'
import { RuntimeStreams } from '../runtime/plugins/runtime-streams.js'
import type { LoadSpec, Manifest, SandboxInstance } from '../runtime/plugins/contract.js'

const quick = process.argv.includes('--quick')
const EVENTS = quick ? 2000 : 20_000
const ROUNDS = quick ? 3 : 10
const root = fileURLToPath(new URL('../../', import.meta.url))
const dir = join(root, 'bench/plugins/bench-echo')
const manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')) as Manifest
const silent = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  trace() {},
  child() {
    return silent
  }
}
const streams = new RuntimeStreams()

function spec(isolation: 'process' | 'in-process'): LoadSpec {
  return {
    dir,
    entry: join(dir, manifest.entry),
    manifest,
    grant: { sandbox: 'isolate', permissions: manifest.permissions, limits: { ...manifest.limits, timeoutMs: 60_000 } },
    capabilities: {
      log: silent as never,
      runtime: (op, args) => streams.call(manifest.name, op, args)
    },
    isolation,
    isolatePool: { processes: 0, pluginsPerProcess: 1 }
  }
}

const request = { message: String(EVENTS) }

async function streamed(inst: SandboxInstance): Promise<number> {
  let n = 0
  const s = streams.begin(manifest.name, (stream, o) =>
    inst.invoke({ kind: 'runtime', name: 'bench-stream', args: { request, stream } }, o)
  )
  for await (const _ of s) n++
  return n
}

async function batched(inst: SandboxInstance): Promise<number> {
  const events = (await inst.invoke({ kind: 'runtime', name: 'bench-stream', args: { request } })) as unknown[]
  let n = 0
  for (const _ of events) n++
  return n
}

interface Row {
  tier: string
  mode: string
  wallUsPerEvent: number
  hostCpuUsPerEvent: number
}

async function measure(tier: string, isolation: 'process' | 'in-process'): Promise<Row[]> {
  const inst = await loadIsolate(spec(isolation))
  const out: Row[] = []
  try {
    for (const [mode, fn] of [
      ['streamed', streamed],
      ['one batch', batched]
    ] as const) {
      await fn(inst) // warm-up
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      let n = 0
      for (let r = 0; r < ROUNDS; r++) n += await fn(inst)
      const wall = (performance.now() - t0) * 1000
      const cpu = process.cpuUsage(c0)
      if (n !== (EVENTS + 1) * ROUNDS) throw new Error(`${mode}: ${n} events, expected ${(EVENTS + 1) * ROUNDS}`)
      out.push({ tier, mode, wallUsPerEvent: wall / n, hostCpuUsPerEvent: (cpu.user + cpu.system) / n })
    }
  } finally {
    await inst.dispose()
  }
  return out
}

const rows = [
  ...(await measure('isolate (sandbox process, default)', 'process')),
  ...(await measure('isolate (in-process)', 'in-process'))
]
const f = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: 2 })
console.log(`\nplugin runtime events, isolate tier (${ROUNDS} streams of ${EVENTS} text deltas)\n`)
console.log('| tier | delivery | wall µs/event | host CPU µs/event |')
console.log('|---|---|---:|---:|')
for (const r of rows) console.log(`| ${r.tier} | ${r.mode} | ${f(r.wallUsPerEvent)} | ${f(r.hostCpuUsPerEvent)} |`)
console.log(JSON.stringify({ bench: 'runtime-stream', node: process.version, events: EVENTS, rounds: ROUNDS, rows }))
