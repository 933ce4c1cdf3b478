// The ai scenario's parts at small counts: both servers stream the same 500 tokens to the agent
// load client, held sessions stay open, and the pipeline script's turns complete under the 13
// policies. Imported from dist like the harness test (worker threads load agent-worker.js).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const dist = (p: string) => join(ROOT, 'dist/bench', p)
const { startPeer, startPlatform } = await import(dist('lib/proc.js'))
const { AgentLoad } = await import(dist('lib/agent-load.js'))
const { demoTokens, MESSAGE } = await import(dist('lib/token-stream.js'))
const { captureTurn } = await import(dist('lib/frame-capture.js'))

const tmp = mkdtempSync(join(tmpdir(), 'bench-ai-test-'))
t.teardown(() => {
  rmSync(tmp, { recursive: true, force: true })
})
const tokens: string[] = await demoTokens(ROOT)
const tokensFile = join(tmp, 'tokens.json')
writeFileSync(tokensFile, JSON.stringify(tokens))
const plugins = join(tmp, 'plugins')
mkdirSync(plugins)
cpSync(join(ROOT, 'bench/plugins/bench-ai'), join(plugins, 'bench-ai'), { recursive: true })
const grant = ['--plugins', plugins, '--set', 'platform.plugins.bench-ai={"sandbox":"inline"}']

t.test(
  'the writer agent (WebSocket and SSE), the AI SDK peer and the raw peer stream the same 500 tokens',
  async (t) => {
    t.equal(tokens.length, 500)
    t.equal(tokens[0], 'You ')
    const ours = await startPlatform(ROOT, tmp, grant)
    t.teardown(() => ours.stop())
    const peer = await startPeer(ROOT, 'ai-sdk-sse.js', [], { BENCH_AI_TOKENS_FILE: tokensFile })
    t.teardown(() => peer.stop())
    const unpaced = await startPeer(ROOT, 'ai-sdk-sse.js', [], {
      BENCH_AI_TOKENS_FILE: tokensFile,
      BENCH_AI_PACING: 'none'
    })
    t.teardown(() => unpaced.stop())
    for (const [name, load] of [
      ['platform', new AgentLoad('ws', ours.url.replace('http', 'ws') + '/platform/agent/bench-writer')],
      ['platform over SSE', new AgentLoad('sse', ours.url + '/platform/agent/bench-writer')],
      ['ai-sdk', new AgentLoad('sse', peer.url + '/api/chat')],
      ['ai-sdk unpaced', new AgentLoad('sse', unpaced.url + '/api/chat')]
    ] as const) {
      t.teardown(() => load.close())
      const r = await load.turns(5, MESSAGE)
      t.equal(r.ok, 5, `${name}: every client completed`)
      t.equal(r.failed, 0)
      t.equal(r.tokens, 5 * 500, `${name}: 500 deltas per client`)
      t.equal(r.minTokens, 500)
      t.equal(r.text, tokens.join(''), `${name}: the deltas join to the demo reply`)
    }

    // the raw uWebSockets.js peer replays a captured turn of ours: the same bytes but the ids
    const url = ours.url + '/platform/agent/bench-writer'
    const captured = await captureTurn(url, MESSAGE, 500)
    t.equal(captured.ws.open.length, 1, 'the session frame on open')
    const S = '\u0000S'
    t.ok(captured.ws.open[0].text.startsWith('{"type":"metadata","key":"session",'))
    t.ok(captured.ws.open[0].text.endsWith(`,"sessionId":"${S}","seq":1}`), 'the session id is the hole')
    t.equal(captured.ws.turn.filter((f: { paced: boolean }) => f.paced).length, 500)
    t.equal(captured.ws.turn[0].text, `{"event":"text-delta","data":{"text":"You "},"sessionId":"${S}","seq":2}`)
    t.match(captured.ws.turn.at(-1).text, /^\{"event":"complete",/)
    t.match(captured.sse.blocks[0].text, /^: connected\n\n$/)
    const framesFile = join(tmp, 'frames.json')
    writeFileSync(framesFile, JSON.stringify(captured))
    const raw = await startPeer(ROOT, 'uws-agent.js', [], { BENCH_AI_FRAMES_FILE: framesFile })
    t.teardown(() => raw.stop())
    const again = await captureTurn(raw.url + '/agent', MESSAGE, 500)
    t.same(again, captured, 'the same frames, headers and pacing marks, with ids of its own')
  }
)

t.test('an unknown agent fails the clients instead of counting them', async (t) => {
  const ours = await startPlatform(ROOT, tmp, grant)
  t.teardown(() => ours.stop())
  const load = new AgentLoad('ws', ours.url.replace('http', 'ws') + '/platform/agent/nobody', 1)
  t.teardown(() => load.close())
  const r = await load.turns(2, MESSAGE)
  t.equal(r.ok, 0)
  t.equal(r.failed, 2)
  t.ok(r.error, 'the first failure is reported')
})

t.test('held sessions finish their turn and stay open until released', async (t) => {
  const ours = await startPlatform(ROOT, tmp, grant)
  t.teardown(() => ours.stop())
  const load = new AgentLoad('ws', ours.url.replace('http', 'ws') + '/platform/agent/bench-short')
  t.teardown(() => load.close())
  const h = await load.hold(7, 'hi')
  t.same(h, { ok: 7, failed: 0 })
  t.equal(await load.release(), 7, 'every session still open')
})

t.test('the pipeline script: every governed turn completes under the 13 policies', async (t) => {
  const r = spawnSync(process.execPath, ['--no-node-snapshot', dist('ai-pipeline.js'), '--quick'], {
    cwd: ROOT,
    env: { ...process.env, BENCH_AI_TURNS: '200' },
    encoding: 'utf8',
    timeout: 60_000
  })
  t.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!)
  t.equal(out.policies, 13)
  t.equal(out.policiesBefore, 0, 'no other policy installed')
  t.ok(out.decisionLogged, 'evaluations reached the decision log')
  t.ok(out.preamble > 0, 'the scope policy adds its preamble')
  for (const k of ['runtimeUs', 'bareUs', 'governedUs', 'dispatchUs']) t.ok(out[k] > 0, `${k} measured`)
})
