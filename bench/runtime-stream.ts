/**
 * Per-event cost of a plugin runtime's stream in each tier: a runtime yielding N short text
 * deltas, read by the host as the plugin yields them (pulled in windows) against the same events
 * handed back as one array when the plugin ends (how plugin runtimes worked before they streamed).
 * Wall µs per event and this process's CPU µs per event (the isolate's sandbox process is not in
 * it; in-process it is). The `plugin-calls` scenario reports the same rows for the isolate tier.
 *
 *   npx tsc -p tsconfig.json && node --no-node-snapshot dist/bench/runtime-stream.js [--quick]
 *
 * Prints a table, then one JSON line (`{"bench":"runtime-stream",...}`).
 */
import { fileURLToPath } from 'node:url'
import { loadInline, loadIsolate, loadWorker, RuntimeStreams, type SandboxInstance } from '../runtime/plugins/index.js'
import { createLogger } from '../runtime/observability/index.js'
import { streamCost, streamSpec, type EventCost } from './lib/runtime-stream-cost.js'

const quick = process.argv.includes('--quick')
const EVENTS = quick ? 2000 : 20_000
const ROUNDS = quick ? 3 : 10
const root = fileURLToPath(new URL('../../', import.meta.url))
const log = createLogger('silent')
const streams = new RuntimeStreams()

const subjects: [string, () => Promise<SandboxInstance>][] = [
  ['isolate (sandbox process, default)', () => loadIsolate(streamSpec(root, 'isolate', streams, log, 'process'))],
  ['isolate (in-process)', () => loadIsolate(streamSpec(root, 'isolate', streams, log, 'in-process'))],
  ['worker', () => loadWorker(streamSpec(root, 'worker', streams, log))],
  ['inline', () => loadInline(streamSpec(root, 'inline', streams, log))]
]
const rows: { tier: string; streamed: EventCost; batch: EventCost }[] = []
for (const [tier, load] of subjects) {
  const inst = await load()
  try {
    rows.push({ tier, ...(await streamCost(inst, streams, EVENTS, ROUNDS)) })
  } finally {
    await inst.dispose()
  }
}
const f = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: 2 })
console.log(`\nplugin runtime events (${ROUNDS} streams of ${EVENTS} text deltas per tier)\n`)
console.log(
  '| tier | streamed wall µs/event | streamed CPU µs/event | one batch wall µs/event | one batch CPU µs/event |'
)
console.log('|---|---:|---:|---:|---:|')
for (const r of rows)
  console.log(
    `| ${r.tier} | ${f(r.streamed.wallUs)} | ${f(r.streamed.cpuUs)} | ${f(r.batch.wallUs)} | ${f(r.batch.cpuUs)} |`
  )
console.log(JSON.stringify({ bench: 'runtime-stream', node: process.version, events: EVENTS, rounds: ROUNDS, rows }))
