/**
 * The governed turn's own CPU cost. The real platform runs in this process with the bench-ai
 * plugin (bench/plugins/bench-ai, inline tier): agent `bench-fast` is answered by the zero-latency
 * plugin runtime `bench-zero`. Rounds alternate three subjects, each N calls awaited one at a time
 * and timed with process.cpuUsage (every thread of the process, LMDB's writer included):
 *   runtime  `bench-zero`'s stream alone, consumed to its end (the baseline to subtract)
 *   bare     `platform.area(AI).runTurn` with no policy installed
 *   governed the same turn with 12 built-in policies of mixed types (all admit) and a scope policy
 *   log      one governed turn's decision-log entries recorded again (where the governed time goes)
 *   dispatch the fleet dispatcher's call of the same agent on behalf of coordinator
 *            `bench-coordinator`, no policy: the bare turn plus the fleet's checks, interceptors,
 *            journal (LMDB) and bus events
 * Prints one JSON line: median CPU µs per call of each subject over the rounds (alternating their
 * order), and the medians of the per-round differences the bench's rows are made of.
 *
 *   npx tsc -p tsconfig.json && node --no-node-snapshot dist/bench/ai-pipeline.js [--rounds N]
 *     [--profile FILE]
 * `--profile FILE` writes a CPU profile (.cpuprofile) of the governed subject's calls in the first
 * round alone: no start-up, warm-up or other subject in it, as `--cpu-prof` would have. The
 * sampler costs CPU of its own, so the figures of such a run are not comparable with others.
 * `--heap-profile FILE` writes the same calls' allocations, sampled every 512 bytes, as a
 * .heapprofile (by allocating function); not with `--profile`, whose figures it would distort.
 * BENCH_AI_TURNS sets N (20 000, quick or not: at 3 000 a round was 0.1 s per subject and one major
 * GC moved the pipeline's figure by a fifth; five quick runs at 10 000 read 17.3-22.2 µs beyond the
 * runtime, five at 20 000, alternated with them, 18.1-20.0). `--yield-every N` (64, a power of two)
 * sets how many calls run between two turns of the event loop: a server running a turn or two per
 * loop turn is 1 or 2, and what is written at the end of a loop turn costs it that much more.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startInProcess } from './lib/in-process.js'
import { AI, type AiRuntimeRequest, type TurnRequest } from '../runtime/ai/index.js'
import { GOVERNANCE } from '../runtime/governance/index.js'
import { aiRequest } from '../runtime/contracts/index.js'
import { FLEET, type DispatchContext } from '../runtime/fleet/index.js'
import { confineSystemPrompt } from '../runtime/scope/index.js'
import { median } from './lib/stats.js'

const N = Number(process.env.BENCH_AI_TURNS ?? 20_000)
const yieldArg = process.argv.indexOf('--yield-every')
const YIELD_EVERY = yieldArg > 0 ? Number(process.argv[yieldArg + 1]) : 64
if (!Number.isInteger(Math.log2(YIELD_EVERY))) throw new Error('--yield-every takes a power of two')
// `--rounds N` (the bench's own option, passed on) or 3
const roundsArg = process.argv.indexOf('--rounds')
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds takes a whole number >= 1`)
const profileArg = process.argv.indexOf('--profile')
const PROFILE = profileArg > 0 ? process.argv[profileArg + 1] : undefined
if (profileArg > 0 && (PROFILE === undefined || PROFILE.startsWith('--'))) throw new Error('--profile takes a file')
const heapArg = process.argv.indexOf('--heap-profile')
const HEAP_PROFILE = heapArg > 0 ? process.argv[heapArg + 1] : undefined
if (heapArg > 0 && (HEAP_PROFILE === undefined || HEAP_PROFILE.startsWith('--')))
  throw new Error('--heap-profile takes a file')
if (PROFILE !== undefined && HEAP_PROFILE !== undefined) throw new Error('--profile or --heap-profile, not both')
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))

/** Twelve built-in types that all admit the bench turn, then a rule-based scope for its agent. */
const CHAIN = `version: "1.0"
policies:
  - {name: kill, type: kill-switch}
  - {name: deny, type: deny-list, config: {phrases: [drop table, rm -rf], regex: ["ignore\\\\s+previous"]}}
  - {name: pii, type: pii-redaction}
  - {name: len, type: message-length, config: {max-chars: 4000}}
  - {name: rate, type: rate-limit, config: {limit: 1000000000, window-seconds: 1}}
  - {name: conc, type: concurrency-limit, config: {max-concurrent: 1000000}}
  - {name: hours, type: time-window, config: {start: "00:00", end: "23:59:59", days: [monday, tuesday, wednesday, thursday, friday, saturday, sunday]}}
  - {name: meta, type: metadata-presence, config: {required-keys: [client.channel]}}
  - {name: roles, type: authorization, config: {required-roles: [customer]}}
  - {name: cost, type: cost-ceiling, config: {budget-usd: 100}}
  - {name: pref, type: preference, config: {phrases: [python 2], prefer: Python 3, reason: EOL}}
  - {name: zscore, type: output-length-zscore}
  - name: shop-scope
    type: scope
    config:
      agent: bench-fast
      purpose: Order status questions for Example Shop customers
      forbidden-topics: [legal advice, medical advice]
      on-breach: DENY
      tier: RULE_BASED
`

const TURN: TurnRequest = {
  agent: 'bench-fast',
  message: 'Where is my order?',
  userId: 'alice',
  sessionId: 'bench-session',
  roles: ['customer'],
  clientMetadata: { channel: 'bench' }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ai-pipeline-'))
  const plugins = join(dataDir, 'plugins')
  cpSync(join(ROOT, 'bench/plugins/bench-ai'), join(plugins, 'bench-ai'), { recursive: true })
  const { platform } = await startInProcess(dataDir, {
    'platform.data-dir': join(dataDir, 'data'),
    'platform.plugins.dirs': [plugins],
    'platform.plugins.bench-ai': { sandbox: 'inline' },
    ...(process.env.BENCH_JOURNAL ? { 'platform.fleet.journal.store': process.env.BENCH_JOURNAL } : {})
  })
  try {
    const ai = platform.area(AI)
    const gov = platform.area(GOVERNANCE)
    const zero = ai.runtime('bench-zero')
    if (zero === undefined) throw new Error('the bench-ai plugin did not load (runtime bench-zero missing)')
    const before = gov.chain.policies.length
    const policies = gov.parse('yaml', 'yaml:bench-ai.yaml', CHAIN)
    if (policies.length !== 13) throw new Error(`expected 13 policies, got ${policies.length}`)

    // the request the agent loop hands the runtime: the scope preamble leads the system prompt
    let runtimeRequest: AiRuntimeRequest = { message: TURN.message, history: [] }
    const turn = async (): Promise<void> => {
      let end: string | undefined
      for await (const e of ai.runTurn(TURN)) {
        if (e.type === 'complete') end = 'complete'
        else if (e.type === 'error') throw new Error(`turn failed: ${e.code} ${e.message}`)
      }
      if (end !== 'complete') throw new Error('turn ended without complete')
    }
    const alone = async (): Promise<void> => {
      let done = false
      for await (const e of zero.stream(runtimeRequest)) if (e.type === 'done') done = true
      if (!done) throw new Error('runtime ended without done')
    }
    const fleet = platform.area(FLEET)
    let coordinations = 0
    const dispatch = async (): Promise<void> => {
      const ctx: DispatchContext = {
        coordinationId: `coord-bench-${++coordinations}`,
        coordinator: 'bench-coordinator',
        principal: 'alice',
        userId: 'alice'
      }
      const r = await fleet.dispatcher.call(ctx, { agent: 'bench-fast', skill: 'run', args: { message: TURN.message } })
      if (!r.success) throw new Error(`dispatch failed: ${r.text}`)
    }
    const cpuPerCall = async (fn: () => Promise<void>, n: number): Promise<number> => {
      const c0 = process.cpuUsage()
      for (let i = 0; i < n; i++) {
        await fn()
        // as a server's event loop between requests: without it, what a turn defers to an
        // Immediate or a timer (LMDB's write callbacks, the log's page flush) never ran within a
        // round, piled up and was promoted to old space, where a server collects it young
        if ((i & (YIELD_EVERY - 1)) === YIELD_EVERY - 1) await new Promise(setImmediate)
      }
      // the decision log's LMDB commits finish on their own thread just after the last call
      await new Promise((r) => setTimeout(r, 100))
      const c = process.cpuUsage(c0)
      return (c.user + c.system) / n
    }

    gov.setSource('yaml:bench-ai.yaml', policies)
    const agentPrompt = platform.plugins.agents().find((a) => a.name === TURN.agent)?.systemPrompt ?? ''
    const governedPrompt = confineSystemPrompt(
      aiRequest({ message: TURN.message, systemPrompt: agentPrompt, agentId: TURN.agent ?? null }),
      gov.chain.policies
    )
    if (governedPrompt === agentPrompt) throw new Error('the scope policy added no preamble')
    runtimeRequest = { systemPrompt: governedPrompt, message: TURN.message, history: [] }
    gov.removeSource('yaml:bench-ai.yaml')

    const samples: Record<'runtime' | 'bare' | 'governed' | 'log' | 'dispatch', number[]> = {
      runtime: [],
      bare: [],
      governed: [],
      log: [],
      dispatch: []
    }
    // warm-up: every path compiled before the first measured round
    for (let i = 0; i < N / 4; i++) await alone()
    for (let i = 0; i < N / 4; i++) await turn()
    for (let i = 0; i < N / 4; i++) await dispatch()
    gov.setSource('yaml:bench-ai.yaml', policies)
    for (let i = 0; i < N / 4; i++) await turn()
    gov.removeSource('yaml:bench-ai.yaml')
    // the warm-up's background work done before the first round: process.cpuUsage counts every
    // thread, and the first subject read 2-3x its later rounds while the journal of the warm-up's
    // dispatches was still being written
    await fleet.journalSettled()
    await new Promise((r) => setTimeout(r, 500))
    // one governed turn's decision-log entries (13 policies, both phases), appended again as a
    // subject of their own: what the log's ring, listeners and LMDB write cost per turn
    const entries = gov.decisionLog.recent(2 * policies.length)
    const logAppends = async (): Promise<void> => {
      for (const e of entries) gov.decisionLog.record(e)
    }
    const loadAverages: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      loadAverages.push(Number(loadavg()[0]!.toFixed(2)))
      const steps: (() => Promise<void>)[] = [
        async () => void samples.runtime.push(await cpuPerCall(alone, N)),
        async () => void samples.bare.push(await cpuPerCall(turn, N)),
        async () => {
          gov.setSource('yaml:bench-ai.yaml', policies)
          const profiler = r === 0 && PROFILE !== undefined ? await startProfile() : undefined
          const heap = r === 0 && HEAP_PROFILE !== undefined ? await startHeapProfile() : undefined
          samples.governed.push(await cpuPerCall(turn, N))
          if (profiler !== undefined) await stopProfile(profiler, PROFILE!)
          if (heap !== undefined) await stopHeapProfile(heap, HEAP_PROFILE!)
          gov.removeSource('yaml:bench-ai.yaml')
        },
        async () => void samples.log.push(await cpuPerCall(logAppends, N)),
        async () => {
          samples.dispatch.push(await cpuPerCall(dispatch, N))
          await fleet.journalSettled()
        }
      ]
      // alternating: what a subject leaves behind (garbage, a cold cache) falls on a different
      // neighbour each round, not always on the runtime alone that every difference subtracts
      if (r % 2 === 1) steps.reverse()
      for (const step of steps) await step()
    }
    // differences within a round, then their median: two medians taken apart can pair a slow
    // round of one subject with a fast round of the other
    const beyond = (a: number[], b: number[]): number =>
      median(
        a.map((x, i) => x - b[i]!),
        (x) => x
      )
    const decisions = gov.decisionLog.recent(1).length
    console.log(
      JSON.stringify({
        turns: N,
        rounds: ROUNDS,
        loadAverages,
        policiesBefore: before,
        policies: policies.length,
        decisionLogged: decisions > 0,
        preamble: governedPrompt.length,
        runtimeUs: median(samples.runtime, (x) => x),
        bareUs: median(samples.bare, (x) => x),
        governedUs: median(samples.governed, (x) => x),
        logEntries: entries.length,
        logUs: median(samples.log, (x) => x),
        dispatchUs: median(samples.dispatch, (x) => x),
        pipelineUs: beyond(samples.governed, samples.runtime),
        bareOverRuntimeUs: beyond(samples.bare, samples.runtime),
        dispatchOverBareUs: beyond(samples.dispatch, samples.bare),
        samples
      })
    )
  } finally {
    await platform.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** A sampling profile at 100 µs from now on (this thread: LMDB's writer is not in it). */
async function startProfile(): Promise<Session> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
  return session
}

async function stopProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post('Profiler.stop')
  // the samples of the profiler's own stop (the inspector's dispatch) and of the idle pause that
  // lets LMDB's writer finish are not the turn's: left out, so self times sum to the turns'
  const own = new Set<number>()
  for (const n of profile.nodes) {
    const f = n.callFrame.functionName
    if ((f === 'dispatch' && n.callFrame.url === '') || f === '(idle)') own.add(n.id)
  }
  const samples: number[] = []
  const timeDeltas: number[] = []
  profile.samples?.forEach((id, i) => {
    if (own.has(id)) return
    samples.push(id)
    timeDeltas.push(profile.timeDeltas?.[i] ?? 0)
  })
  writeFileSync(file, JSON.stringify({ ...profile, samples, timeDeltas }))
  session.disconnect()
}

/** Allocation sampling every 512 bytes from now on, the objects collected since included. */
async function startHeapProfile(): Promise<Session> {
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  return session
}

async function stopHeapProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post('HeapProfiler.stopSampling')
  writeFileSync(file, JSON.stringify(profile))
  session.disconnect()
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
