import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, startPeer, startPlatform } from '../lib/proc.js'
import { AgentLoad } from '../lib/agent-load.js'
import { MESSAGE, WRITER, benchAiSetup, measureStreams, type Streamed, type Subject } from '../lib/token-stream.js'

const TOKEN = 'bench-openai-token-0123456789'

/**
 * The OpenAI-compatible API's streaming cost: clients that each POST `/v1/responses` with
 * `stream: true` for the bench writer agent (demo runtime, 500-token reply) and read the
 * Responses events, against the agent endpoint's own SSE on the same server (same agent, same
 * message) and the Vercel AI SDK peer of the `ai` scenario; server CPU per delivered token.
 * A second server records every delta as its own step (`text-coalesce-ms=0`): one Responses delta
 * event per token, as the agent endpoint sends them, reported beside it.
 */
const scenario: Scenario = {
  name: 'openai-api',
  description:
    'OpenAI-compatible API: server CPU per token streamed by POST /v1/responses (stream: true, demo runtime, 500-token reply) vs the agent endpoint SSE and the Vercel AI SDK',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const notes: string[] = []
    const rows: ResultRow[] = []
    const clients = Number(process.env.BENCH_OPENAI_CLIENTS ?? (opts.quick ? 250 : 1000))
    const rounds = Number(process.env.BENCH_OPENAI_ROUNDS ?? opts.rounds ?? 1)
    const { tokens, tokensFile, pluginArgs } = await benchAiSetup(opts.root, opts.tmpDir)
    // writes on, one principal, no per-principal quota: every client is the same principal, and
    // the quota's refusals are not what this measures
    const args = [
      ...pluginArgs,
      ...NO_ADDRESS_CAPS,
      '--set',
      `platform.auth.tokens=${JSON.stringify([{ token: TOKEN, principal: 'bench' }])}`,
      '--set',
      'platform.interactions.http-write-enabled=true',
      '--set',
      'platform.interactions.quota.runs-in-flight=0',
      '--set',
      'platform.interactions.quota.bytes-per-minute=0'
    ]
    const ours = await startPlatform(opts.root, opts.tmpDir, args)
    const everyDelta = await startPlatform(opts.root, opts.tmpDir, [
      ...args,
      '--set',
      'platform.interactions.text-coalesce-ms=0'
    ])
    const peer = await startPeer(opts.root, 'ai-sdk-sse.js', [], {
      BENCH_AI_TOKENS_FILE: tokensFile,
      BENCH_AI_PACING: 'immediate'
    })
    const responses = (url: string): AgentLoad =>
      new AgentLoad('responses', url + '/v1/responses', 2, { model: WRITER, token: TOKEN })
    const subjects: Subject[] = [
      ['responses', ours, responses(ours.url)],
      ['agent-sse', ours, new AgentLoad('sse', ours.url + `/platform/agent/${WRITER}`)],
      ['responses-every-delta', everyDelta, responses(everyDelta.url)],
      ['ai-sdk', peer, new AgentLoad('sse', peer.url + '/api/chat')]
    ]
    const measured = await measureStreams(subjects, { clients, rounds, tokens, log: opts.log, signal: opts.signal })
    const { samples, mid } = measured
    notes.push(...measured.notes)
    const r = mid('responses'),
      e = mid('responses-every-delta'),
      sse = mid('agent-sse'),
      sdk = mid('ai-sdk')
    const vs = (f: (m: Streamed) => number): Record<string, number> => ({
      ...(sse === undefined ? {} : { 'agent-sse': f(sse) }),
      ...(sdk === undefined ? {} : { 'ai-sdk': f(sdk) })
    })
    rows.push(
      row(
        'responses.cpu_us_per_token',
        'server CPU per delivered token, POST /v1/responses streamed (ratio = tokens per CPU-second)',
        'µs',
        'lower',
        r?.cpuUsPerToken,
        vs((m) => m.cpuUsPerToken)
      ),
      row(
        'responses.every_delta.cpu_us_per_token',
        'the same with every delta its own step and event (text-coalesce-ms=0)',
        'µs',
        'lower',
        e?.cpuUsPerToken,
        vs((m) => m.cpuUsPerToken),
        false
      ),
      row(
        'responses.tokens_per_s',
        'tokens delivered/s',
        '/s',
        'higher',
        r?.tokensPerSec,
        vs((m) => m.tokensPerSec),
        false
      ),
      row(
        'responses.peak_rss_mb',
        'server peak RSS while streaming',
        'MB',
        'lower',
        r?.peakRssMb,
        vs((m) => m.peakRssMb),
        false
      )
    )
    notes.push(
      `${clients} clients at once, each a new connection sending a ${MESSAGE.split(' ').length}-word message and reading the ${tokens.length}-token reply of agent ${WRITER} (demo runtime, one token per event-loop turn). \`responses\`: POST /v1/responses {model, input, stream: true} with a bearer token, Responses events until \`response.completed\`: each a governed turn run as a background interaction in the LMDB store, its text deltas coalesced into \`text\` steps (platform.interactions.text-coalesce-ms, 50 ms by default), each step one \`response.output_text.delta\` event; tokens counted as the words of the deltas. \`responses-every-delta\`: a second server with text-coalesce-ms=0, one step and one event per token. \`agent-sse\`: POST /platform/agent/${WRITER} on the first server, one \`text-delta\` frame per token, the exchange appended to LMDB conversation memory. \`ai-sdk\`: the ai scenario's paced peer (streamText over MockLanguageModelV3, one chunk per event-loop turn, UI message stream as SSE, nothing stored). One client's text checked against the reply on every subject; server CPU = utime+stime from /proc over the round; ${rounds} round(s), alternating, median`
    )
    if (r !== undefined)
      notes.push(
        `server CPU (1 core = 100%): ${subjects.map(([n]) => `${n} ${((mid(n)?.cpuCores ?? 0) * 100).toFixed(0)}%`).join(', ')}; the load clients (2 worker threads per subject) share the 2 cores`
      )
    return { scenario: 'openai-api', description: this.description, rows, notes, details: { samples } }
  }
}

export default scenario
