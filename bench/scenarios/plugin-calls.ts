import { join } from 'node:path'
import { row, type RoundsInfo, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
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
import { alternate, roundsOf } from '../lib/rounds.js'
import { median } from '../lib/stats.js'
import { RuntimeStreams } from '../../runtime/plugins/index.js'
import { streamCost, streamSpec, type EventCost } from '../lib/runtime-stream-cost.js'

interface Measured {
  /** Wall time per call, one awaited at a time (median round). */
  serialUs: number
  /** CPU per call, one at a time: this process, plus the sandbox process for isolate-process (median round). */
  serialCpuUs: number
  /** Median over rounds of this subject's CPU per call minus inline's in the same round. */
  overheadCpuUs: number | undefined
  c64PerSec: number
  c64CpuUs: number
}

interface Round {
  wallUs: number
  cpuUs: number
}

/**
 * Plugin call overhead: the bench `add` tool (bench/plugins) called through each tier's
 * `SandboxInstance.invoke` in the harness process: one call awaited at a time (the overhead a single
 * call pays), and 64 calls in flight (throughput). The isolate tier twice: in-process (the isolate
 * on this thread, what the overhead target is about) and in its supervised sandbox process (the
 * default). One at a time, all tiers are loaded together and measured in alternating rounds, by CPU
 * per call (a neighbour's load on a shared machine inflates wall time, not CPU), and each tier's
 * overhead is its CPU per call minus inline's in the same round, median over rounds.
 * Then, in the isolate tier, what one event of a plugin runtime's stream costs (bench-echo's runtime),
 * streamed as the plugin yields against the same events returned as one array.
 */
const scenario: Scenario = {
  name: 'plugin-calls',
  description:
    'Plugin call overhead: add(a, b) through SandboxInstance.invoke, inline vs isolate (in-process and sandbox process) vs worker; one at a time and 64 in flight',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const log = createLogger('silent')
    const serialN = opts.quick ? 4000 : 20_000
    const c64N = opts.quick ? 20_000 : 100_000
    const rounds = roundsOf(opts, opts.quick ? 5 : 9)
    // each phase stops at its count or its time budget, whichever comes first (slow tiers)
    const budgetMs = opts.quick ? 1500 : 5000
    const roundMs = budgetMs / rounds
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
    const instances: SandboxInstance[] = []
    const loaded = new Map<string, { one: () => Promise<unknown>; pid: () => number | undefined }>()
    let info: RoundsInfo | undefined
    try {
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
        try {
          const inst = await s.load(spec)
          instances.push(inst)
          const call = { kind: 'tool' as const, name: `add_${s.tier}`, args: { a: 1, b: 2 } }
          const one = (): Promise<unknown> => inst.invoke(call, {})
          // warm-up by count and time: JIT tiers on both sides of the boundary settle after thousands of calls
          const w0 = performance.now()
          for (let i = 0; i < 5000 && performance.now() - w0 < roundMs; i++) await one()
          const backend = (inst as unknown as { backend?: { pid?: number } }).backend
          loaded.set(s.name, { one, pid: () => backend?.pid })
        } catch (err) {
          notes.push(`${s.name}: not measured (${(err as Error).message.split('\n')[0]})`)
          opts.log(`  ${s.name}: ${(err as Error).message}`)
        }
      }
      const measured = await alternate(
        [...loaded.keys()],
        rounds,
        async (name) => {
          const { one, pid } = loaded.get(name)!
          const child = pid()
          const c0 = cpuSecondsOf('self') + (child === undefined ? 0 : cpuSecondsOf(child))
          const t0 = performance.now()
          let done = 0
          while (done < serialN && performance.now() - t0 < roundMs) {
            await one()
            done++
          }
          const wallUs = ((performance.now() - t0) * 1000) / done
          const cpu = cpuSecondsOf('self') + (child === undefined ? 0 : cpuSecondsOf(child)) - c0
          return { wallUs, cpuUs: (cpu * 1e6) / done }
        },
        (m: Round) => m.cpuUs,
        opts.signal
      )
      info = measured.info
      const inlineRounds = measured.all.get('inline')
      for (const [name, { one }] of loaded) {
        const mine = measured.all.get(name)!
        const wall = median(mine, (m) => m.wallUs).wallUs
        const cpu = measured.median.get(name)!.cpuUs
        const overheadCpuUs =
          inlineRounds === undefined || name === 'inline'
            ? undefined
            : median(
                mine.map((m, r) => m.cpuUs - inlineRounds[r]!.cpuUs),
                (d) => d
              )
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
        res[name] = { serialUs: wall, serialCpuUs: cpu, overheadCpuUs, c64PerSec: finished / sec, c64CpuUs }
        opts.log(
          `  ${name.padEnd(16)} ${wall.toFixed(2)} µs/call one at a time (${cpu.toFixed(2)} µs CPU${overheadCpuUs === undefined ? '' : `, ${overheadCpuUs.toFixed(2)} over inline`}), ${Math.round(finished / sec)} calls/s at 64 in flight`
        )
      }
    } finally {
      for (const inst of instances.splice(0)) await inst.dispose()
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
      rows.push(
        row(
          `${s.name}.call_cpu_us`,
          `${s.name}: CPU per call awaited one at a time`,
          'µs',
          'lower',
          m?.serialCpuUs,
          s.name === 'inline' || inline === undefined ? {} : { inline: inline.serialCpuUs },
          false
        )
      )
      if (s.name !== 'inline')
        rows.push(
          row(
            `${s.name}.overhead_us`,
            `${s.name}: CPU over an inline call, one at a time (median of rounds)`,
            'µs',
            'lower',
            m?.overheadCpuUs,
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
      `one at a time: ${rounds} alternating rounds of up to ${serialN} calls (at most ${Math.round(roundMs)} ms each) after up to 5 000 warm-up calls; overhead = CPU per call minus inline's in the same round (this process, and the sandbox process for isolate-process; the worker threads are this process's), median of rounds; 64 in flight: up to ${c64N} calls, at most ${budgetMs / 1000} s. Ratios vs inline show what a tier costs over a plain in-process call; the targets are absolute`
    )
    notes.push(
      `runtime streams: bench-echo's runtime yields ${events} short text deltas per stream; 'one batch' is the same events returned as one array when the plugin ends (the design before runtimes streamed). Harness CPU leaves out the sandbox process`
    )
    return {
      scenario: 'plugin-calls',
      description: this.description,
      rows,
      notes,
      ...(info === undefined ? {} : { rounds: info }),
      details: { ...res, stream }
    }
  }
}

export default scenario
