import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, runBenchScript, sleep, startPeer, startPlatform, type ServerProcess } from '../lib/proc.js'
import { AgentLoad } from '../lib/agent-load.js'
import { median } from '../lib/stats.js'
import { DemoRuntime } from '../../runtime/ai/index.js'

const WORDS = ['governed', 'turns', 'stream', 'tokens', 'to', 'every', 'connected', 'client', 'quickly']
/**
 * The demo runtime answers `You said: "<message>".`, one token per whitespace-separated word, so this
 * 498-word message gets the writer agent's 500-token reply (its prompt names no role to add to it).
 */
export const MESSAGE = Array.from({ length: 498 }, (_, i) => WORDS[i % WORDS.length]).join(' ')
const WRITER = 'bench-writer'
const SHORT = 'bench-short'

interface Pipeline {
  turns: number
  runtimeUs: number
  bareUs: number
  governedUs: number
  policies: number
  logEntries: number
  logUs: number
  dispatchUs: number
  rounds: number
  loadAverages: number[]
}

interface Streamed {
  clients: number
  cpuUsPerToken: number
  tokensPerSec: number
  roundSec: number
  peakRssMb: number
  cpuCores: number
}

/**
 * AI turns, three figures. (1) The governed turn's own CPU: bench/ai-pipeline.ts in a child
 * process (12 built-in policies and a scope policy, zero-latency plugin runtime, minus the runtime
 * alone). (2) Streaming: clients that each open a connection, send one prompt and read a 500-token
 * reply at once, on our agent endpoint over WebSocket and over SSE (demo runtime, `text-delta`
 * frames) and on the Vercel AI SDK peer (bench/peers/ai-sdk-sse.js: `streamText` over
 * `MockLanguageModelV3` emitting the same 500 deltas, UI message stream as SSE on node:http), paced
 * like the demo runtime (one token per event-loop turn) and unpaced; server CPU per delivered token
 * from /proc. (3) RSS per connected agent session that finished one short turn and idles.
 */
const scenario: Scenario = {
  name: 'ai',
  description:
    'AI turns: pipeline CPU per governed turn (12 policies + scope) beyond a zero-latency runtime; 1 000 WebSocket clients streaming a 500-token demo reply vs the Vercel AI SDK (SSE; paced and unpaced) per token; RSS per idle agent session',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const notes: string[] = []
    const rows: ResultRow[] = []

    const p = await pipeline(opts)
    const beyond = p === undefined ? undefined : p.governedUs - p.runtimeUs
    rows.push(
      row(
        'pipeline.cpu_us_per_turn',
        'pipeline CPU per turn beyond the runtime (12 policies + scope)',
        'µs',
        'lower',
        beyond,
        {}
      ),
      row(
        'pipeline.bare_us_per_turn',
        'pipeline CPU per turn beyond the runtime, no policy',
        'µs',
        'lower',
        p === undefined ? undefined : p.bareUs - p.runtimeUs,
        {},
        false
      ),
      row(
        'pipeline.runtime_us',
        'zero-latency plugin runtime alone, per request',
        'µs',
        'lower',
        p?.runtimeUs,
        {},
        false
      ),
      row(
        'fleet.dispatch_us_per_call',
        'fleet dispatch CPU per call beyond the bare turn (checks, interceptors, journal, events)',
        'µs',
        'lower',
        p === undefined ? undefined : p.dispatchUs - p.bareUs,
        {},
        false
      ),
      row(
        'pipeline.decision_log_us_per_turn',
        "of which: recording the turn's 26 decision-log entries",
        'µs',
        'lower',
        p?.logUs,
        {},
        false
      )
    )
    if (p !== undefined)
      notes.push(
        `pipeline: dist/bench/ai-pipeline.js${opts.quick ? ' --quick' : ''}, in one process, ${p.turns} calls per subject and round awaited one at a time, process.cpuUsage (all threads: LMDB's writer included); per turn: governed ${p.governedUs.toFixed(1)} µs, no policy ${p.bareUs.toFixed(1)} µs, runtime alone ${p.runtimeUs.toFixed(1)} µs (${p.policies} policies); recording one governed turn's ${p.logEntries} decision-log entries again costs ${p.logUs.toFixed(1)} µs; a fleet dispatch of the same agent (no policy) ${p.dispatchUs.toFixed(1)} µs`
      )

    const clients = Number(process.env.BENCH_AI_CLIENTS ?? (opts.quick ? 250 : 1000))
    // one round by default: with 1 000 clients the paced AI SDK peer alone used 240 s of CPU (500 s
    // of wall time on the shared 2-core VM); BENCH_AI_ROUNDS adds alternating rounds (median kept)
    const rounds = Number(process.env.BENCH_AI_ROUNDS ?? opts.rounds ?? 1)
    const tokens = await demoTokens(opts.root)
    const tokensFile = join(opts.tmpDir, 'tokens.json')
    writeFileSync(tokensFile, JSON.stringify(tokens))
    const plugins = join(opts.tmpDir, 'plugins')
    mkdirSync(plugins, { recursive: true })
    cpSync(join(opts.root, 'bench/plugins/bench-ai'), join(plugins, 'bench-ai'), { recursive: true })
    const ourArgs = [
      '--plugins',
      plugins,
      '--set',
      'platform.plugins.bench-ai={"sandbox":"inline"}',
      ...NO_ADDRESS_CAPS
    ]

    const ours = await startPlatform(opts.root, opts.tmpDir, ourArgs)
    const paced = await startPeer(opts.root, 'ai-sdk-sse.js', [], {
      BENCH_AI_TOKENS_FILE: tokensFile,
      BENCH_AI_PACING: 'immediate'
    })
    const burst = await startPeer(opts.root, 'ai-sdk-sse.js', [], {
      BENCH_AI_TOKENS_FILE: tokensFile,
      BENCH_AI_PACING: 'none'
    })
    const subjects: [string, ServerProcess, AgentLoad][] = [
      ['platform', ours, new AgentLoad('ws', ours.url.replace(/^http/, 'ws') + `/platform/agent/${WRITER}`)],
      ['platform-sse', ours, new AgentLoad('sse', ours.url + `/platform/agent/${WRITER}`)],
      ['ai-sdk', paced, new AgentLoad('sse', paced.url + '/api/chat')],
      ['ai-sdk-unpaced', burst, new AgentLoad('sse', burst.url + '/api/chat')]
    ]
    const samples: Record<string, Streamed[]> = Object.fromEntries(subjects.map(([n]) => [n, []]))
    const expected = tokens.join('')
    // a subject that fails (warm-up or a round) is reported in the notes and left out; the others go on
    const failed = new Set<string>()
    const attempt = async (name: string, fn: () => Promise<void>): Promise<void> => {
      try {
        await fn()
      } catch (err) {
        failed.add(name)
        notes.push(`${name}: not measured: ${(err as Error).message}`)
        opts.log(`  ${name}: failed: ${(err as Error).message}`)
      }
    }
    try {
      for (const [name, , load] of subjects)
        await attempt(name, async () => {
          const w = await load.turns(Math.min(30, clients), MESSAGE)
          if (w.failed > 0 || w.minTokens !== tokens.length || w.text !== expected)
            throw new Error(
              `warm-up turns did not stream the expected ${tokens.length} tokens (${w.failed} failed, fewest ${w.minTokens}; ${w.error ?? (w.text === expected ? '' : 'text differs')})`
            )
        })
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? subjects : [...subjects].reverse()
        for (const [name, server, load] of order) {
          if (opts.signal.aborted) throw new Error('aborted')
          if (failed.has(name)) continue
          await attempt(name, async () => {
            const m = await streamRound(server, load, clients, tokens, expected)
            samples[name]!.push(m)
            opts.log(
              `  ${name.padEnd(14)}: ${clients} clients x ${tokens.length} tokens in ${m.roundSec.toFixed(1)} s, ${m.cpuUsPerToken.toFixed(2)} server CPU µs/token (server ${(m.cpuCores * 100).toFixed(0)}% CPU), peak RSS ${m.peakRssMb.toFixed(0)} MB`
            )
          })
        }
      }
    } finally {
      for (const [, server, load] of subjects) {
        await load.close()
        await server.stop()
      }
    }
    // a subject with a failed round has no figure: its other rounds ran beside a different load
    const mid = (name: string): Streamed | undefined =>
      samples[name]!.length === 0 || failed.has(name) ? undefined : median(samples[name]!, (m) => m.cpuUsPerToken)
    const o = mid('platform'),
      os = mid('platform-sse'),
      a = mid('ai-sdk'),
      u = mid('ai-sdk-unpaced')
    const vs = (f: (m: Streamed) => number): Record<string, number> => ({
      ...(a === undefined ? {} : { 'ai-sdk': f(a) }),
      ...(u === undefined ? {} : { 'ai-sdk-unpaced': f(u) })
    })
    rows.push(
      row(
        'stream.cpu_us_per_token',
        'server CPU per delivered token (ratio = tokens per CPU-second)',
        'µs',
        'lower',
        o?.cpuUsPerToken,
        vs((m) => m.cpuUsPerToken)
      ),
      row(
        'stream.sse.cpu_us_per_token',
        'server CPU per delivered token, ours over SSE (one-shot POST) too',
        'µs',
        'lower',
        os?.cpuUsPerToken,
        vs((m) => m.cpuUsPerToken),
        false
      ),
      row(
        'stream.tokens_per_s',
        'tokens delivered/s',
        '/s',
        'higher',
        o?.tokensPerSec,
        vs((m) => m.tokensPerSec),
        false
      ),
      row(
        'stream.peak_rss_mb',
        'server peak RSS while streaming',
        'MB',
        'lower',
        o?.peakRssMb,
        vs((m) => m.peakRssMb),
        false
      )
    )
    notes.push(
      `streaming: ${clients} clients at once, each a new connection sending a ${MESSAGE.split(' ').length}-word message and reading ${tokens.length} text deltas (ours: WebSocket /platform/agent/${WRITER}, demo runtime, \`text-delta\` event frames then \`complete\`, the exchange appended to LMDB conversation memory; ours over SSE: a POST to the same path, the same frames as SSE data, one row of its own; peers: POST, AI SDK UI message stream as SSE, nothing stored; \`ai-sdk\`: the mock model yields one chunk per event-loop turn (setImmediate), as the demo runtime does after every word, so both write one frame per token; \`ai-sdk-unpaced\`: the mock emits every chunk at once, so node:http coalesces a whole reply into a few writev calls); every client's delta count and one client's text checked on both sides; server CPU = utime+stime from /proc over the round, connection setup included; ${rounds} round(s), alternating, median`
    )
    if (o !== undefined && a !== undefined)
      notes.push(
        `streaming CPU (1 core = 100%): ${subjects.map(([n]) => `${n} ${((mid(n)?.cpuCores ?? 0) * 100).toFixed(0)}%`).join(', ')}; the load clients (2 worker threads) share the 2 cores`
      )

    const s = await idleSessions(opts, ourArgs, notes)
    rows.push(
      row(
        'session.rss_per_session_kb',
        'server RSS per idle agent session (after one turn)',
        'KB',
        'lower',
        s,
        {},
        false
      )
    )
    return {
      scenario: 'ai',
      description: this.description,
      rows,
      notes,
      // the rounds behind the pipeline figures, whose targets are the ones a busy machine moves most
      ...(p === undefined ? {} : { rounds: { count: p.rounds, loadAverages: p.loadAverages } }),
      details: { pipeline: p, samples }
    }
  }
}

/** The deltas the demo runtime streams for the writer agent, computed by the same runtime class. */
export async function demoTokens(root: string): Promise<string[]> {
  const mod = (await import(pathToFileURL(join(root, 'bench/plugins/bench-ai/index.js')).href)) as {
    default: { agents: { name: string; systemPrompt?: string }[] }
  }
  const systemPrompt = mod.default.agents.find((a) => a.name === WRITER)?.systemPrompt
  const out: string[] = []
  for await (const e of new DemoRuntime().stream({ systemPrompt, message: MESSAGE, history: [] }))
    if (e.type === 'text') out.push(e.delta)
  if (out.length !== 500) throw new Error(`the writer agent's demo reply has ${out.length} tokens, not 500`)
  return out
}

async function streamRound(
  server: ServerProcess,
  load: AgentLoad,
  clients: number,
  tokens: string[],
  expected: string
): Promise<Streamed> {
  server.resetPeak()
  const cpu0 = server.cpuSeconds()
  const t0 = performance.now()
  const r = await load.turns(clients, MESSAGE)
  const sec = (performance.now() - t0) / 1000
  const cpu = server.cpuSeconds() - cpu0
  if (r.failed > 0 || r.minTokens !== tokens.length || r.text !== expected)
    throw new Error(
      `${r.failed} of ${clients} clients failed or got fewer than ${tokens.length} tokens (fewest ${r.minTokens}): ${r.error ?? 'text differs'}`
    )
  return {
    clients,
    cpuUsPerToken: (cpu * 1e6) / r.tokens,
    tokensPerSec: r.tokens / sec,
    roundSec: sec,
    peakRssMb: server.memory().peak / 1048576,
    cpuCores: cpu / sec
  }
}

/** RSS growth per WebSocket agent session that finished one short turn and stays connected. */
async function idleSessions(opts: RunOptions, args: string[], notes: string[]): Promise<number | undefined> {
  const n = Number(process.env.BENCH_AI_SESSIONS ?? (opts.quick ? 1000 : 2000))
  const server = await startPlatform(opts.root, opts.tmpDir, args)
  const load = new AgentLoad('ws', server.url.replace(/^http/, 'ws') + `/platform/agent/${SHORT}`)
  try {
    // first turns pay for lazy set-up (LMDB memory database, compiled code): not per-session memory
    await load.hold(50, 'hi')
    await load.release()
    await sleep(1000)
    const before = server.memory().rss
    const t0 = performance.now()
    const h = await load.hold(n, 'hi')
    if (h.ok < n) {
      notes.push(`sessions: only ${h.ok} of ${n} sessions finished their turn (${h.error ?? 'unknown'})`)
      if (h.ok < n * 0.9) return undefined
    }
    await sleep(opts.quick ? 1000 : 3000)
    const after = server.memory().rss
    const open = await load.release()
    const kb = (after - before) / h.ok / 1024
    opts.log(
      `  sessions : ${h.ok} agent sessions (one turn each) in ${((performance.now() - t0) / 1000).toFixed(1)} s, RSS ${(before / 1048576).toFixed(0)} → ${(after / 1048576).toFixed(0)} MB = ${kb.toFixed(2)} KB/session, ${open} still open`
    )
    notes.push(
      `sessions: ${h.ok} WebSockets on /platform/agent/${SHORT}, each sent "hi" (demo reply of a few tokens, appended to conversation memory) and then idled; RSS per session = (server VmRSS ${opts.quick ? 1 : 3} s after the last turn - VmRSS before) / sessions; ${open} of them still open at the end`
    )
    return kb
  } finally {
    await load.close()
    await server.stop()
  }
}

/** Runs bench/ai-pipeline.ts as a child process and reads its JSON line. */
async function pipeline(opts: RunOptions): Promise<Pipeline | undefined> {
  const args = [
    ...(opts.quick ? ['--quick'] : []),
    ...(opts.rounds === undefined ? [] : ['--rounds', String(opts.rounds)])
  ]
  const out = await runBenchScript(opts.root, 'ai-pipeline', args, opts.signal)
  const line = out.split('\n').find((l) => l.startsWith('{'))
  if (line === undefined) return undefined
  const p = JSON.parse(line) as Pipeline
  opts.log(
    `  pipeline : governed turn ${p.governedUs.toFixed(1)} µs, no policy ${p.bareUs.toFixed(1)} µs, runtime alone ${p.runtimeUs.toFixed(1)} µs CPU per call → ${(p.governedUs - p.runtimeUs).toFixed(1)} µs beyond the runtime, of which the decision log ${p.logUs.toFixed(1)} µs`
  )
  return p
}

export default scenario
