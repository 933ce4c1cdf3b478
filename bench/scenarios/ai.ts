import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, runBenchScript, sleep, startPeer, startPlatform } from '../lib/proc.js'
import { AgentLoad } from '../lib/agent-load.js'
import { MESSAGE, WRITER, benchAiSetup, measureStreams, type Streamed, type Subject } from '../lib/token-stream.js'
import { captureTurn, type CapturedTurn } from '../lib/frame-capture.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const SHORT = 'bench-short'
// the writer's reply from a runtime that hands over every delta at once
const WRITER_BURST = 'bench-writer-burst'
/** The smaller client count of the streaming rows, whose CPU per token the full count must not exceed. */
const SMALL = 50

interface Pipeline {
  turns: number
  runtimeUs: number
  bareUs: number
  governedUs: number
  policies: number
  logEntries: number
  logUs: number
  dispatchUs: number
  /** Medians of the per-round differences (absent from a build before they were reported). */
  pipelineUs?: number
  bareOverRuntimeUs?: number
  dispatchOverBareUs?: number
  rounds: number
  loadAverages: number[]
}

/**
 * AI turns, three figures. (1) The governed turn's own CPU: bench/ai-pipeline.ts in a child
 * process (12 built-in policies and a scope policy, zero-latency plugin runtime, minus the runtime
 * alone). (2) Streaming: clients that each open a connection, send one prompt and read a 500-token
 * reply at once, on our agent endpoint over WebSocket and over SSE (demo runtime, `text-delta`
 * frames) and on the Vercel AI SDK peer (bench/peers/ai-sdk-sse.js: `streamText` over
 * `MockLanguageModelV3` emitting the same 500 deltas, UI message stream as SSE on node:http), paced
 * like the demo runtime (one token per event-loop turn) and unpaced; server CPU per delivered token
 * from /proc, and against a raw uWebSockets.js server sending the same frames at the same pacing
 * (bench/peers/uws-agent.js, the floor of a token), in user space and in total, at 50 clients and
 * at the scenario's count. (3) RSS per connected agent session that finished one short turn and idles.
 */
const scenario: Scenario = {
  name: 'ai',
  description:
    'AI turns: pipeline CPU per governed turn (12 policies + scope) beyond a zero-latency runtime; 1 000 WebSocket clients streaming a 500-token demo reply vs the Vercel AI SDK (SSE; paced and unpaced) and raw uWebSockets.js sending the same frames, per token; RSS per idle agent session',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const notes: string[] = []
    const rows: ResultRow[] = []

    const p = await pipeline(opts)
    const beyond = p === undefined ? undefined : (p.pipelineUs ?? p.governedUs - p.runtimeUs)
    // the same at a server's pace: what is written at the end of an event-loop turn is paid per turn
    const atPace = await pipeline(opts, 2)
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
        'pipeline.paced_us_per_turn',
        'pipeline CPU per turn beyond the runtime, 2 turns per event-loop turn',
        'µs',
        'lower',
        atPace?.pipelineUs,
        {},
        false
      ),
      row(
        'pipeline.bare_us_per_turn',
        'pipeline CPU per turn beyond the runtime, no policy',
        'µs',
        'lower',
        p === undefined ? undefined : (p.bareOverRuntimeUs ?? p.bareUs - p.runtimeUs),
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
        p === undefined ? undefined : (p.dispatchOverBareUs ?? p.dispatchUs - p.bareUs),
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
        `pipeline: dist/bench/ai-pipeline.js, in one process, ${p.turns} calls per subject and round awaited one at a time, process.cpuUsage (all threads: LMDB's writer included); per turn: governed ${p.governedUs.toFixed(1)} µs, no policy ${p.bareUs.toFixed(1)} µs, runtime alone ${p.runtimeUs.toFixed(1)} µs (${p.policies} policies); recording one governed turn's ${p.logEntries} decision-log entries again costs ${p.logUs.toFixed(1)} µs; a fleet dispatch of the same agent (no policy) ${p.dispatchUs.toFixed(1)} µs`
      )

    const clients = Number(process.env.BENCH_AI_CLIENTS ?? (opts.quick ? 250 : 1000))
    // one round by default: with 1 000 clients the paced AI SDK peer alone used 240 s of CPU (500 s
    // of wall time on the shared 2-core VM); BENCH_AI_ROUNDS adds alternating rounds (median kept)
    const rounds = Number(process.env.BENCH_AI_ROUNDS ?? opts.rounds ?? 1)
    const { tokens, tokensFile, pluginArgs } = await benchAiSetup(opts.root, opts.tmpDir)
    const ourArgs = [...pluginArgs, ...NO_ADDRESS_CAPS]

    const ours = await startPlatform(opts.root, opts.tmpDir, ourArgs)
    // the raw peer replays one real turn of ours: the same frames, byte for byte but the ids
    const framesFile = join(opts.tmpDir, 'agent-frames.json')
    let captured: CapturedTurn
    try {
      captured = await captureTurn(ours.url + `/platform/agent/${WRITER}`, MESSAGE, tokens.length)
    } catch (err) {
      await ours.stop()
      throw err
    }
    writeFileSync(framesFile, JSON.stringify(captured))
    const raw = await startPeer(opts.root, 'uws-agent.js', [], { BENCH_AI_FRAMES_FILE: framesFile })
    const paced = await startPeer(opts.root, 'ai-sdk-sse.js', [], {
      BENCH_AI_TOKENS_FILE: tokensFile,
      BENCH_AI_PACING: 'immediate'
    })
    const burst = await startPeer(opts.root, 'ai-sdk-sse.js', [], {
      BENCH_AI_TOKENS_FILE: tokensFile,
      BENCH_AI_PACING: 'none'
    })
    const subjects: Subject[] = [
      ['platform', ours, new AgentLoad('ws', ours.url.replace(/^http/, 'ws') + `/platform/agent/${WRITER}`)],
      ['platform-sse', ours, new AgentLoad('sse', ours.url + `/platform/agent/${WRITER}`)],
      ['ai-sdk', paced, new AgentLoad('sse', paced.url + '/api/chat')],
      ['ai-sdk-unpaced', burst, new AgentLoad('sse', burst.url + '/api/chat')],
      // every delta at once on our side too: the unpaced peer's like
      ['platform-unpaced', ours, new AgentLoad('sse', ours.url + `/platform/agent/${WRITER_BURST}`)],
      ['uws-raw', raw, new AgentLoad('ws', raw.url.replace(/^http/, 'ws') + '/agent')],
      ['uws-raw-sse', raw, new AgentLoad('sse', raw.url + '/agent')]
    ]
    const small = Math.min(SMALL, clients)
    // a quick round at the full count is under a second: three in a row for the rows against the raw
    // peer (five steadied nothing: docs/bench.md)
    const fullRepeat = opts.quick ? 3 : 1
    const measured = await measureStreams(subjects, {
      clients,
      rounds,
      tokens,
      log: opts.log,
      signal: opts.signal,
      small: { clients: small, only: ['platform', 'platform-sse', 'uws-raw', 'uws-raw-sse'] },
      fullRepeat
    })
    const { samples, mid } = measured
    notes.push(...measured.notes)
    const o = mid('platform'),
      os = mid('platform-sse'),
      a = mid('ai-sdk'),
      u = mid('ai-sdk-unpaced')
    const vs = (f: (m: Streamed) => number): Record<string, number> => ({
      ...(a === undefined ? {} : { 'ai-sdk': f(a) }),
      ...(u === undefined ? {} : { 'ai-sdk-unpaced': f(u) })
    })
    // the raw uWebSockets.js peer sending the same frames: the floor of a streamed token
    const rawVs = (peer: string, n: number, f: (m: Streamed) => number): Record<string, number> => {
      const m = n === clients ? mid(peer) : mid(peer, n)
      return m === undefined ? {} : { 'uws-raw': f(m) }
    }
    const at = (name: string, n: number): Streamed | undefined => (n === clients ? mid(name) : mid(name, n))
    const rawRows = (): ResultRow[] => {
      const out: ResultRow[] = []
      for (const [wire, ourName, peer, prefix] of [
        ['WebSocket', 'platform', 'uws-raw', 'stream'],
        ['SSE', 'platform-sse', 'uws-raw-sse', 'stream.sse']
      ] as const) {
        for (const n of small === clients ? [clients] : [clients, small]) {
          const id = n === clients ? prefix : `${prefix}.c${n}`
          if (n !== clients)
            out.push(
              row(
                `${id}.cpu_us_per_token`,
                `server CPU per delivered token, ${wire}, ${n} clients (vs the raw uWebSockets.js peer)`,
                'µs',
                'lower',
                at(ourName, n)?.cpuUsPerToken,
                rawVs(peer, n, (m) => m.cpuUsPerToken)
              )
            )
          out.push(
            row(
              `${id}.user_us_per_token`,
              `user-space server CPU per delivered token, ${wire}, ${n} clients (vs the raw uWebSockets.js peer)`,
              'µs',
              'lower',
              at(ourName, n)?.userUsPerToken,
              rawVs(peer, n, (m) => m.userUsPerToken)
            )
          )
        }
        // growth with the clients: ours at the scenario's count against ours at SMALL (reported), and
        // that growth against the raw peer's over the same counts (gated): the raw server's own CPU
        // per frame grows with the sockets it serves (1.45x from 50 to 1 000 here), which no server
        // sending a frame per token escapes, so only growth beyond it is ours
        if (small !== clients) {
          const few = at(ourName, small)
          const many = at(ourName, clients)
          const rawFew = at(peer, small)
          const rawMany = at(peer, clients)
          out.push(
            row(
              `${prefix}.growth.cpu_us_per_token`,
              `server CPU per delivered token, ${wire}, ${clients} clients (vs ours at ${small} clients)`,
              'µs',
              'lower',
              many?.cpuUsPerToken,
              few === undefined ? {} : { [`c${small}`]: few.cpuUsPerToken },
              false
            ),
            row(
              `${prefix}.growth`,
              `growth of server CPU per delivered token from ${small} to ${clients} clients, ${wire} (vs the raw uWebSockets.js peer's growth)`,
              'x',
              'lower',
              many === undefined || few === undefined ? undefined : many.cpuUsPerToken / few.cpuUsPerToken,
              rawMany === undefined || rawFew === undefined
                ? {}
                : { 'uws-raw': rawMany.cpuUsPerToken / rawFew.cpuUsPerToken }
            )
          )
        }
      }
      return out
    }
    rows.push(
      row(
        'stream.cpu_us_per_token',
        'server CPU per delivered token (ratio = tokens per CPU-second)',
        'µs',
        'lower',
        o?.cpuUsPerToken,
        { ...vs((m) => m.cpuUsPerToken), ...rawVs('uws-raw', clients, (m) => m.cpuUsPerToken) }
      ),
      row(
        'stream.sse.cpu_us_per_token',
        'server CPU per delivered token, ours over SSE (one-shot POST) too',
        'µs',
        'lower',
        os?.cpuUsPerToken,
        { ...vs((m) => m.cpuUsPerToken), ...rawVs('uws-raw-sse', clients, (m) => m.cpuUsPerToken) },
        false
      ),
      row(
        'stream.unpaced.cpu_us_per_token',
        `server CPU per delivered token, every delta at once (ours over SSE, agent ${WRITER_BURST}) vs the AI SDK unpaced`,
        'µs',
        'lower',
        mid('platform-unpaced')?.cpuUsPerToken,
        u === undefined ? {} : { 'ai-sdk-unpaced': u.cpuUsPerToken }
      ),
      ...rawRows(),
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
      `streaming: ${clients} clients at once, each a new connection sending a ${MESSAGE.split(' ').length}-word message and reading ${tokens.length} text deltas (ours: WebSocket /platform/agent/${WRITER}, demo runtime, \`text-delta\` event frames then \`complete\`, the exchange appended to LMDB conversation memory; ours over SSE: a POST to the same path, the same frames as SSE data, one row of its own; peers: POST, AI SDK UI message stream as SSE, nothing stored; \`ai-sdk\`: the mock model yields one chunk per event-loop turn (setImmediate), as the demo runtime does after every word, so both write one frame per token; \`ai-sdk-unpaced\`: the mock emits every chunk at once, so node:http coalesces a whole reply into a few writev calls; against it \`platform-unpaced\`: ours over SSE, agent ${WRITER_BURST}, whose runtime hands over the same deltas in one array); every client's delta count and one client's text checked on both sides; server CPU = utime+stime from /proc over the round, connection setup included, user space = utime; ${rounds} round(s), alternating, median`,
      `raw peer (\`uws-raw\`, bench/peers/uws-agent.js): raw uWebSockets.js replaying one turn of ours captured at the start (WebSocket: the session frame on open, then the turn's ${captured.ws.turn.length} frames; SSE: the same headers and event blocks), byte for byte with ids of its own, each text delta one event-loop turn (setImmediate) after the one before, one frame string and one send per frame, the same clients; ours and the raw peer (WebSocket and SSE) run their full round ${fullRepeat} time(s) in a row, and at ${small} clients ${Math.max(1, Math.round(clients / small)) * fullRepeat} times in a row (as many tokens) right after it`
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

/** Runs bench/ai-pipeline.ts as a child process (`yieldEvery` calls a loop turn, else 64) and reads its JSON line. */
async function pipeline(opts: RunOptions, yieldEvery?: number): Promise<Pipeline | undefined> {
  const args = [
    ...(opts.rounds === undefined ? [] : ['--rounds', String(opts.rounds)]),
    ...(yieldEvery === undefined ? [] : ['--yield-every', String(yieldEvery)])
  ]
  const out = await runBenchScript(opts.root, 'ai-pipeline', args, opts.signal)
  const line = out.split('\n').find((l) => l.startsWith('{'))
  if (line === undefined) return undefined
  const p = JSON.parse(line) as Pipeline
  opts.log(
    `  pipeline${yieldEvery === undefined ? '' : ` (${yieldEvery} a loop turn)`} : governed turn ${p.governedUs.toFixed(1)} µs, no policy ${p.bareUs.toFixed(1)} µs, runtime alone ${p.runtimeUs.toFixed(1)} µs CPU per call → ${(p.pipelineUs ?? p.governedUs - p.runtimeUs).toFixed(1)} µs beyond the runtime (median of the rounds' differences), of which the decision log ${p.logUs.toFixed(1)} µs`
  )
  return p
}

export default scenario
