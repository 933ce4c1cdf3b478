import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { PREAMBLE_HEADING } from '../../runtime/scope/preamble.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk, type Reply } from '../helpers/openai-server.js'
import { agentSocket, deltas, eventually, lpAgent, postTurn, untilTerminal } from './agent-clients.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const PATH = '/platform/agent/demo'
const server = await new OpenAiServer().start()
t.teardown(() => server.close())

const hello: Reply = {
  stream: sseEvents([deltaChunk({ content: 'Hello' }), deltaChunk({ content: ' world' }, 'stop'), usageChunk(5, 2)])
}
/** One chunk, then chunks every 100 ms for a long while: a runtime that is slow to finish. */
const slow: Reply = {
  stream: sseEvents([
    deltaChunk({ content: 'first' }),
    ...Array.from({ length: 200 }, () => deltaChunk({ content: ' more' }))
  ]),
  intervalMs: 100
}
const hang: Reply = { hang: true }

const tokens = [
  { token: 'alice-token-0123456789', principal: 'alice' },
  { token: 'bob-token-0123456789ab', principal: 'bob' }
]
const config = (dataDir: string): Record<string, unknown> => ({
  'platform.plugins.dirs': [join(REPO, 'plugins')],
  'platform.ai.runtime': 'openai',
  'platform.ai.openai.base-url': server.url,
  'platform.ai.openai.model': 'test-model',
  'platform.ai.openai.max-concurrency': 4,
  'platform.auth.tokens': tokens,
  'platform.data-dir': dataDir
})
const dataDir = mkdtempSync(join(tmpdir(), 'agent-openai-'))
let tp = await startTestPlatform(config(dataDir), { install: installAreas })
t.teardown(async () => {
  await tp.close()
  rmSync(dataDir, { recursive: true, force: true })
})
const ai = () => tp.platform.area(AI)
const alice = { authorization: 'Bearer alice-token-0123456789' }
const bob = { authorization: 'Bearer bob-token-0123456789ab' }

t.test('openai runtime: a turn on WebSocket, SSE and long-polling', async (t) => {
  server.chat = () => hello
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  server.reset()
  const ws = await s.turn('hi')
  // the demo agent declares a scope: its preamble leads the system prompt the model receives
  const system = server.on('/chat/completions')[0].messages[0]
  t.equal(system.role, 'system')
  t.ok(String(system.content).startsWith(PREAMBLE_HEADING), 'the scope preamble reached the model')
  t.match(system.content, /You are the platform guide/)
  t.same(
    ws.filter((f) => f.event === 'text-delta').map((f) => f.data.text),
    ['Hello', ' world']
  )
  t.match(
    ws.find((f) => f.type === 'metadata'),
    { key: 'model', value: 'test-model' }
  )
  t.match(ws.at(-1), {
    event: 'complete',
    data: { summary: 'Hello world', usage: { input: 5, output: 2, total: 7, model: 'test-model' } }
  })
  const sse = await postTurn(tp.url, PATH, 'hi')
  t.match(sse.frames.at(-1), { event: 'complete', data: { summary: 'Hello world' } })
  const lp = await lpAgent(tp.url, PATH)
  t.teardown(lp.stop)
  t.equal(await lp.send('hi'), 200)
  t.equal(deltas(await untilTerminal(lp.inbox)), 'Hello world')
})

t.test(
  'a model chunk burst (300 deltas at once): every delta once, in order, seq contiguous, then complete',
  async (t) => {
    // the deltas of one pass go out in one write: none may be lost, doubled or reordered
    const words = Array.from({ length: 300 }, (_, i) => `w${i} `)
    server.chat = () => ({
      stream: sseEvents([...words.map((w) => deltaChunk({ content: w })), deltaChunk({}, 'stop'), usageChunk(3, 300)])
    })
    const check = (frames: any[], wire: string): void => {
      const texts = frames.filter((f) => f.event === 'text-delta').map((f) => f.data.text)
      t.same(texts, words, `${wire}: every delta once, in order`)
      const seqs = frames.map((f) => f.seq)
      t.same(
        seqs,
        seqs.map((_, i) => seqs[0] + i),
        `${wire}: seq contiguous`
      )
      t.match(frames.at(-1), { event: 'complete', data: { summary: words.join('') } }, `${wire}: complete last`)
    }
    const s = await agentSocket(tp.url, PATH)
    t.teardown(() => s.ws.close())
    check(await s.turn('go'), 'WebSocket')
    check((await postTurn(tp.url, PATH, 'go')).frames, 'SSE')
  }
)

t.test('cancel mid-stream: the turn ends with one error frame, the socket takes the next turn', async (t) => {
  server.chat = () => slow
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  s.ws.send('tell me a long story')
  await s.inbox.next((f) => f.event === 'text-delta')
  // a second prompt while one is in flight is refused, the turn goes on
  s.ws.send('and another')
  t.match(await s.inbox.next((f) => f.event === 'error'), { data: { code: 'busy', recoverable: true } })
  s.ws.send('{"type":"cancel"}')
  const rest = await untilTerminal(s.inbox)
  t.match(rest.at(-1), { type: 'error', data: /cancelled/ })
  await eventually(() => ai().inFlight() === 0, 5000, 'in-flight turns back to 0')
  server.chat = () => hello
  t.match((await s.turn('again')).at(-1), { event: 'complete', data: { summary: 'Hello world' } })
})

t.test('a runtime that never answers: clients that go away leave no session, turn or runtime slot', async (t) => {
  server.chat = () => hang
  // more abandoned turns than platform.ai.openai.max-concurrency: a leaked slot would block the next turn
  for (let i = 0; i < 6; i++) {
    const s = await agentSocket(tp.url, PATH)
    s.ws.send('are you there?')
    await eventually(() => ai().inFlight() === 1, 5000, 'turn started')
    s.ws.terminate()
    await eventually(() => ai().inFlight() === 0, 5000, 'turn ended with its client')
  }
  const ac = new AbortController()
  const pending = fetch(tp.url + PATH, { method: 'POST', body: 'hello?', signal: ac.signal }).catch(() => undefined)
  await eventually(() => ai().inFlight() === 1, 5000, 'one-shot turn started')
  ac.abort()
  await pending
  await eventually(() => ai().inFlight() === 0 && ai().sessions.activeCount() === 0, 5000, 'all back to zero')
  server.chat = () => hello
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  t.match((await s.turn('still there?')).at(-1), { event: 'complete' }, 'the runtime has capacity again')
})

t.test('memory: the history of a conversation reaches the model, and only its owner', async (t) => {
  server.chat = () => hello
  const a = await agentSocket(tp.url, PATH, alice)
  t.teardown(() => a.ws.close())
  await a.turn(JSON.stringify({ message: 'my name is Zed', conversationId: 'c1' }))
  server.reset()
  await a.turn(JSON.stringify({ message: 'what is my name?', conversationId: 'c1' }))
  const sent = server.on('/chat/completions')[0].messages as { role: string; content: string }[]
  t.match(sent.slice(-3), [
    { role: 'user', content: 'my name is Zed' },
    { role: 'assistant', content: 'Hello world' },
    { role: 'user', content: 'what is my name?' }
  ])
  // bob, and an anonymous caller, with the same conversation id see nothing of alice's
  for (const headers of [bob, {}]) {
    const other = await agentSocket(tp.url, PATH, headers)
    server.reset()
    await other.turn(JSON.stringify({ message: 'what is my name?', conversationId: 'c1' }))
    const seen = JSON.stringify(server.on('/chat/completions')[0].messages)
    t.notMatch(seen, /Zed/, 'another caller cannot read the conversation')
    other.ws.close()
  }
  // alice on a new connection, a POST this time, continues her conversation
  server.reset()
  await postTurn(tp.url, PATH, JSON.stringify({ message: 'and now?', conversationId: 'c1' }), alice)
  t.match(JSON.stringify(server.on('/chat/completions')[0].messages), /Zed/)
})

t.test('memory: without a conversation id, the connection is the conversation', async (t) => {
  server.chat = () => hello
  // the session's first turn knows its key is empty and reads nothing; the second reads it
  const m = ai().memory
  const reads: string[] = []
  const read = m.read.bind(m)
  m.read = (id, limit) => {
    reads.push(id)
    return read(id, limit)
  }
  t.teardown(() => {
    delete (m as Partial<typeof m>).read
  })
  const s = await agentSocket(tp.url, PATH)
  await s.turn('remember Quokka')
  t.same(reads, [], 'a fresh session key is not read')
  server.reset()
  await s.turn('what did I say?')
  t.match(JSON.stringify(server.on('/chat/completions')[0].messages), /Quokka/)
  t.same(reads, [`s:${s.session!.sessionId}`], 'the next turn reads what the first appended')
  s.ws.close()
  const key = `s:${s.session!.sessionId}`
  // an anonymous connection's memory cannot be reached again: it is forgotten when it goes
  await eventually(() => ai().sessions.get(s.session!.sessionId) === undefined, 5000, 'session ended')
  const until = Date.now() + 3000
  while ((await ai().memory.read(key)).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
  t.same(await ai().memory.read(key), [])
})

t.test('memory survives a restart with the LMDB store', async (t) => {
  server.chat = () => hello
  t.equal(ai().memory.kind, 'lmdb')
  await postTurn(tp.url, PATH, JSON.stringify({ message: 'the code word is Heron', conversationId: 'keep' }), alice)
  await tp.close()
  tp = await startTestPlatform(config(dataDir), { install: installAreas })
  server.reset()
  const s = await agentSocket(tp.url, PATH, alice)
  t.teardown(() => s.ws.close())
  await s.turn(JSON.stringify({ message: 'what was the code word?', conversationId: 'keep' }))
  t.match(JSON.stringify(server.on('/chat/completions')[0].messages), /Heron/)
})
