/**
 * Server CPU per streamed token, shared by the scenarios that stream the demo runtime's 500-token
 * reply (`ai`, `openai-api`): the bench-ai plugin and the reply it gives, and the measurement of
 * several subjects (a server and the clients that stream from it), warmed up, then measured in
 * alternating rounds with the median kept.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { DemoRuntime } from '../../runtime/ai/index.js'
import type { AgentLoad } from './agent-load.js'
import type { ServerProcess } from './proc.js'
import { median } from './stats.js'

const WORDS = ['governed', 'turns', 'stream', 'tokens', 'to', 'every', 'connected', 'client', 'quickly']
/**
 * The demo runtime answers `You said: "<message>".`, one token per whitespace-separated word, so this
 * 498-word message gets the writer agent's 500-token reply (its prompt names no role to add to it).
 */
export const MESSAGE = Array.from({ length: 498 }, (_, i) => WORDS[i % WORDS.length]).join(' ')
/** The bench-ai agent that answers MESSAGE with 500 tokens. */
export const WRITER = 'bench-writer'

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

/**
 * What the streaming scenarios start from: the writer's tokens (also in `tokensFile`, which the AI
 * SDK peer reads) and our server's arguments with the bench-ai plugin granted inline.
 */
export async function benchAiSetup(
  root: string,
  tmpDir: string
): Promise<{ tokens: string[]; tokensFile: string; pluginArgs: string[] }> {
  const tokens = await demoTokens(root)
  const tokensFile = join(tmpDir, 'tokens.json')
  writeFileSync(tokensFile, JSON.stringify(tokens))
  const plugins = join(tmpDir, 'plugins')
  mkdirSync(plugins, { recursive: true })
  cpSync(join(root, 'bench/plugins/bench-ai'), join(plugins, 'bench-ai'), { recursive: true })
  return {
    tokens,
    tokensFile,
    pluginArgs: ['--plugins', plugins, '--set', 'platform.plugins.bench-ai={"sandbox":"inline"}']
  }
}

/** One measured round of one subject. */
export interface Streamed {
  clients: number
  cpuUsPerToken: number
  /** Of which user space (the rest is the kernel: mostly one send per frame). */
  userUsPerToken: number
  tokensPerSec: number
  roundSec: number
  peakRssMb: number
  cpuCores: number
}

/** A subject: its name, the server measured, and the clients that stream from it. */
export type Subject = [name: string, server: ServerProcess, load: AgentLoad]

export interface StreamMeasure {
  clients: number
  rounds: number
  tokens: string[]
  log: (msg: string) => void
  signal: AbortSignal
  /**
   * Also measures the subjects named in `only` at `clients` clients in each round, right after
   * their round at the full count; their samples are kept as `<name>@<clients>`.
   */
  small?: { clients: number; only: readonly string[] }
  /**
   * Times in a row the subjects named in `small.only` run their full-count round (1 when absent):
   * /proc counts CPU in 10 ms ticks and a quick round is under a second, so one collection or one
   * tick either way moved the user-space figure by a tenth and more.
   */
  fullRepeat?: number
}

type Measured = {
  samples: Record<string, Streamed[]>
  notes: string[]
  /** The median round of a subject that never failed; `clients`: of its `small` rounds. */
  mid: (name: string, clients?: number) => Streamed | undefined
}

/**
 * Warms each subject up (30 clients), then runs `rounds` rounds of `clients` clients at once per
 * subject, alternating the order. A subject that fails (warm-up or a round) gets a note and no
 * figure; the others go on. `mid(name)` is the median round of a subject that never failed.
 * Every subject's load is closed and its server stopped afterwards, whatever happened.
 */
export async function measureStreams(subjects: Subject[], m: StreamMeasure): Promise<Measured> {
  try {
    return await measureSubjects(subjects, m)
  } finally {
    for (const [, server, load] of subjects) {
      await load.close()
      await server.stop()
    }
  }
}

async function measureSubjects(subjects: Subject[], m: StreamMeasure): Promise<Measured> {
  const notes: string[] = []
  const samples: Record<string, Streamed[]> = Object.fromEntries(subjects.map(([n]) => [n, []]))
  const small = m.small
  const smallKey = (name: string): string => `${name}@${small?.clients}`
  if (small !== undefined) for (const n of small.only) samples[smallKey(n)] = []
  const expected = m.tokens.join('')
  const failed = new Set<string>()
  const attempt = async (name: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn()
    } catch (err) {
      failed.add(name)
      notes.push(`${name}: not measured: ${(err as Error).message}`)
      m.log(`  ${name}: failed: ${(err as Error).message}`)
    }
  }
  for (const [name, , load] of subjects)
    await attempt(name, async () => {
      const w = await load.turns(Math.min(30, m.clients), MESSAGE)
      if (w.failed > 0 || w.minTokens !== m.tokens.length || w.text !== expected)
        throw new Error(
          `warm-up turns did not stream the expected ${m.tokens.length} tokens (${w.failed} failed, fewest ${w.minTokens}; ${w.error ?? (w.text === expected ? '' : 'text differs')})`
        )
    })
  for (let r = 0; r < m.rounds; r++) {
    const order = r % 2 === 0 ? subjects : [...subjects].reverse()
    for (const [name, server, load] of order) {
      if (m.signal.aborted) throw new Error('aborted')
      if (failed.has(name)) continue
      await attempt(name, async () => {
        const times = small?.only.includes(name) === true ? (m.fullRepeat ?? 1) : 1
        const s = await streamRound(server, load, m.clients, m.tokens, expected, times)
        samples[name]!.push(s)
        m.log(
          `  ${name.padEnd(14)}: ${m.clients} clients x ${m.tokens.length} tokens${times > 1 ? `, ${times} times` : ''} in ${s.roundSec.toFixed(1)} s, ${s.cpuUsPerToken.toFixed(2)} server CPU µs/token (${s.userUsPerToken.toFixed(2)} user), server ${(s.cpuCores * 100).toFixed(0)}% CPU, peak RSS ${s.peakRssMb.toFixed(0)} MB`
        )
        if (small === undefined || !small.only.includes(name)) return
        // as many tokens as the full round: /proc counts CPU in 10 ms ticks
        const repeat = Math.max(1, Math.round(m.clients / small.clients)) * (m.fullRepeat ?? 1)
        const x = await streamRound(server, load, small.clients, m.tokens, expected, repeat)
        samples[smallKey(name)]!.push(x)
        m.log(
          `  ${name.padEnd(14)}: ${small.clients} clients x ${m.tokens.length} tokens, ${repeat} times in ${x.roundSec.toFixed(1)} s, ${x.cpuUsPerToken.toFixed(2)} server CPU µs/token (${x.userUsPerToken.toFixed(2)} user)`
        )
      })
    }
  }
  // a subject with a failed round has no figure: its other rounds ran beside a different load
  const mid = (name: string, clients?: number): Streamed | undefined => {
    const key = clients === undefined ? name : `${name}@${clients}`
    const got = samples[key]
    return got === undefined || got.length === 0 || failed.has(name) ? undefined : median(got, (s) => s.cpuUsPerToken)
  }
  return { samples, notes, mid }
}

/**
 * One round: `clients` clients at once (`repeat` times in a row); server CPU from /proc over the
 * round, per delivered token.
 */
async function streamRound(
  server: ServerProcess,
  load: AgentLoad,
  clients: number,
  tokens: string[],
  expected: string,
  repeat = 1
): Promise<Streamed> {
  server.resetPeak()
  const cpu0 = server.cpuTimes()
  const t0 = performance.now()
  let delivered = 0
  for (let i = 0; i < repeat; i++) {
    const r = await load.turns(clients, MESSAGE)
    if (r.failed > 0 || r.minTokens !== tokens.length || r.text !== expected)
      throw new Error(
        `${r.failed} of ${clients} clients failed or got fewer than ${tokens.length} tokens (fewest ${r.minTokens}): ${r.error ?? 'text differs'}`
      )
    delivered += r.tokens
  }
  const sec = (performance.now() - t0) / 1000
  const cpu1 = server.cpuTimes()
  const user = cpu1.user - cpu0.user
  const cpu = user + cpu1.system - cpu0.system
  return {
    clients,
    cpuUsPerToken: (cpu * 1e6) / delivered,
    userUsPerToken: (user * 1e6) / delivered,
    tokensPerSec: delivered / sec,
    roundSec: sec,
    peakRssMb: server.memory().peak / 1048576,
    cpuCores: cpu / sec
  }
}
