import { join } from 'node:path'
import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import {
  loadInline,
  loadIsolate,
  loadWorker,
  type LoadSpec,
  type SandboxInstance,
  type SandboxKind
} from '../../runtime/plugins/index.js'
import { createLogger } from '../../runtime/observability/index.js'
import { cpuSecondsOf } from '../lib/proc.js'
import { RuntimeStreams } from '../../runtime/plugins/index.js'
import { streamCost, streamSpec, type EventCost } from '../lib/runtime-stream-cost.js'

interface Measured {
  serialUs: number
  c64PerSec: number
  c64CpuUs: number
}

/**
 * Plugin call overhead: the bench `add` tool (bench/plugins) called through each tier's
 * `SandboxInstance.invoke` in the harness process: one call awaited at a time (the overhead a single
 * call pays), and 64 calls in flight (throughput). The isolate tier twice: in-process (the isolate
 * on this thread, what the 10 µs target is about) and in its supervised sandbox process (the default).
 * Then, in the isolate tier, what one event of a plugin runtime's stream costs (bench-echo's runtime),
 * streamed as the plugin yields against the same events returned as one array.
 */
const scenario: Scenario = {
  name: 'plugin-calls',
  description:
    'Plugin call overhead: add(a, b) through SandboxInstance.invoke, inline vs isolate (in-process and sandbox process) vs worker; one at a time and 64 in flight',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const log = createLogger('silent')
    const serialN = opts.quick ? 5000 : 20_000
    const c64N = opts.quick ? 20_000 : 100_000
    const subjects: {
      name: string
      tier: SandboxKind
      load: (s: LoadSpec) => Promise<SandboxInstance>
      isolation?: 'process' | 'in-process'
    }[] = [
      { name: 'inline', tier: 'inline', load: loadInline },
      { name: 'isolate', tier: 'isolate', load: loadIsolate, isolation: 'in-process' },
      { name: 'isolate-process', tier: 'isolate', load: loadIsolate, isolation: 'process' },
      { name: 'worker', tier: 'worker', load: loadWorker }
    ]
    const res: Record<string, Measured | undefined> = {}
    const notes: string[] = []
    for (const s of subjects) {
      if (opts.signal.aborted) throw new Error('aborted')
      const dir = join(opts.root, 'bench/plugins', `bench-${s.tier}`)
      const limits = { memoryMb: 64, timeoutMs: 5000, concurrency: 64 }
      const spec: LoadSpec = {
        dir,
        entry: join(dir, 'index.js'),
        manifest: {
          name: `bench-${s.tier}`,
          version: '1.0.0',
          entry: 'index.js',
          sandbox: s.tier,
          permissions: { net: [], kv: false, env: [] },
          limits
        },
        grant: { sandbox: s.tier, permissions: { net: [], kv: false, env: [] }, limits },
        capabilities: { log },
        ...(s.isolation !== undefined ? { isolation: s.isolation } : {})
      }
      let inst: SandboxInstance | undefined
      try {
        inst = await s.load(spec)
        const call = { kind: 'tool' as const, name: `add_${s.tier}`, args: { a: 1, b: 2 } }
        const one = (): Promise<unknown> => inst!.invoke(call, {})
        for (let i = 0; i < 500; i++) await one() // warm-up
        // each phase stops at its count or its time budget, whichever comes first (slow tiers)
        const budgetMs = opts.quick ? 1500 : 5000
        const t0 = performance.now()
        let done = 0
        while (done < serialN && performance.now() - t0 < budgetMs) {
          await one()
          done++
        }
        const serialUs = ((performance.now() - t0) * 1000) / done
        // 64 in flight: each slot starts its next call when its previous one resolves
        const c0 = cpuSecondsOf('self')
        const t1 = performance.now()
        let started = 0,
          finished = 0
        const slot = async () => {
          while (started < c64N && performance.now() - t1 < budgetMs) {
            started++
            await one()
            finished++
          }
        }
        await Promise.all(Array.from({ length: 64 }, slot))
        const sec = (performance.now() - t1) / 1000
        const c64CpuUs = ((cpuSecondsOf('self') - c0) * 1e6) / finished
        res[s.name] = { serialUs, c64PerSec: finished / sec, c64CpuUs }
        opts.log(
          `  ${s.name.padEnd(16)} ${serialUs.toFixed(2)} µs/call one at a time, ${Math.round(finished / sec)} calls/s at 64 in flight`
        )
      } catch (err) {
        notes.push(`${s.name}: not measured (${(err as Error).message.split('\n')[0]})`)
        opts.log(`  ${s.name}: ${(err as Error).message}`)
      } finally {
        await inst?.dispose()
      }
    }
    // plugin runtime streams, isolate tier: per-event cost, streamed vs one batch
    const streams = new RuntimeStreams()
    const events = opts.quick ? 2000 : 20_000
    const stream: Record<string, { streamed: EventCost; batch: EventCost } | undefined> = {}
    for (const isolation of ['in-process', 'process'] as const) {
      const name = isolation === 'process' ? 'isolate-process' : 'isolate'
      let inst: SandboxInstance | undefined
      try {
        inst = await loadIsolate(streamSpec(opts.root, 'isolate', streams, log, isolation))
        stream[name] = await streamCost(inst, streams, events, opts.quick ? 2 : 5)
        opts.log(
          `  ${name.padEnd(16)} ${stream[name].streamed.wallUs.toFixed(2)} µs/event streamed, ${stream[name].batch.wallUs.toFixed(2)} as one batch`
        )
      } catch (err) {
        notes.push(`${name} stream: not measured (${(err as Error).message.split('\n')[0]})`)
      } finally {
        await inst?.dispose()
      }
    }
    const rows = []
    for (const name of ['isolate', 'isolate-process'])
      for (const [k, label] of [
        ['wallUs', 'wall'],
        ['cpuUs', 'harness CPU']
      ] as const) {
        const m = stream[name]
        rows.push(
          row(
            `${name}.stream.event_${k === 'wallUs' ? 'us' : 'cpu_us'}`,
            `${name}: one plugin runtime event streamed, ${label}`,
            'µs',
            'lower',
            m?.streamed[k],
            m === undefined ? {} : { 'one batch': m.batch[k] },
            false
          )
        )
      }
    const inline = res.inline
    for (const s of subjects) {
      const m = res[s.name]
      rows.push(
        row(
          `${s.name}.call_us`,
          `${s.name}: one call awaited at a time`,
          'µs',
          'lower',
          m?.serialUs,
          s.name === 'inline' || inline === undefined ? {} : { inline: inline.serialUs },
          false
        )
      )
      if (s.name !== 'inline')
        rows.push(
          row(
            `${s.name}.overhead_us`,
            `${s.name}: overhead over an inline call`,
            'µs',
            'lower',
            m === undefined || inline === undefined ? undefined : m.serialUs - inline.serialUs,
            {},
            false
          )
        )
      rows.push(
        row(
          `${s.name}.c64.calls_per_s`,
          `${s.name}: calls/s, 64 in flight`,
          '/s',
          'higher',
          m?.c64PerSec,
          s.name === 'inline' || inline === undefined ? {} : { inline: inline.c64PerSec },
          false
        )
      )
    }
    notes.push(
      `one at a time: up to ${serialN} calls after 500 warm-up calls; 64 in flight: up to ${c64N} calls; each phase at most ${opts.quick ? 1.5 : 5} s. In the harness process (the sandbox process of isolate-process and the worker threads are its children/threads). Ratios vs inline show what a tier costs over a plain in-process call; the targets are absolute`
    )
    notes.push(
      `runtime streams: bench-echo's runtime yields ${events} short text deltas per stream; 'one batch' is the same events returned as one array when the plugin ends (the design before runtimes streamed). Harness CPU leaves out the sandbox process`
    )
    return { scenario: 'plugin-calls', description: this.description, rows, notes, details: { ...res, stream } }
  }
}

export default scenario
