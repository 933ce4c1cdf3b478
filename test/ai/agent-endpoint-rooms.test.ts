import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { writePlugin } from '../plugins/helpers.js'
import { agentSocket, deltas, eventually, postTurn, sseAgent, untilTerminal } from './agent-clients.js'
import { refusedUpgrade, wsUrl } from '../transport/clients.js'

const AGENTS = `import { definePlugin, agent } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [
  agent({ name: 'town-crier', broadcastReply: true, systemPrompt: 'You announce things to everyone.' }),
  agent({ name: 'custom', endpoint: '/chat/custom', systemPrompt: 'Served on a path of its own.' })
] })
`
const server = await new OpenAiServer().start()
t.teardown(() => server.close())
server.chat = () => ({
  stream: sseEvents([deltaChunk({ content: 'Oyez' }), deltaChunk({ content: ' oyez' }, 'stop'), usageChunk(3, 2)])
})
const root = mkdtempSync(join(tmpdir(), 'agent-rooms-'))
writePlugin(root, 'agents', { index: AGENTS })
const tp = await startTestPlatform(
  {
    'platform.plugins.dirs': [root],
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': server.url,
    'platform.ai.openai.model': 'test-model'
  },
  { install: installAreas }
)
t.teardown(async () => {
  await tp.close()
  rmSync(root, { recursive: true, force: true })
})
const ai = tp.platform.area(AI)
const CRIER = '/platform/agent/town-crier'

t.test('broadcastReply: one model call, the reply reaches every member, each in its own session', async (t) => {
  const a = await agentSocket(tp.url, CRIER)
  const b = await agentSocket(tp.url, CRIER)
  const c = await sseAgent(tp.url, CRIER)
  t.teardown(async () => {
    a.ws.close()
    b.ws.close()
    await c.stop()
  })
  server.reset()
  const fromA = await a.turn('hear ye')
  const atB = await untilTerminal(b.inbox)
  const atC = await untilTerminal(c.inbox)
  t.equal(server.on('/chat/completions').length, 1, 'the model ran once')
  for (const [who, frames, session] of [
    ['sender', fromA, a.session!],
    ['other socket', atB, b.session!],
    ['sse member', atC, c.session]
  ] as const) {
    t.equal(deltas(frames), 'Oyez oyez', who)
    t.match(frames.at(-1), { event: 'complete', data: { summary: 'Oyez oyez' } }, who)
    t.ok(
      frames.every((f) => f.sessionId === session.sessionId),
      `${who}: frames carry its own session`
    )
    t.same(
      frames.map((f) => f.seq),
      frames.map((_, i) => session.seq + 1 + i),
      `${who}: its own seq`
    )
  }
})

t.test("an agent's own endpoint path serves it; hot reload takes agents away and brings them back", async (t) => {
  const s = await agentSocket(tp.url, '/chat/custom')
  t.match(s.session, { value: { agent: 'custom' } })
  t.match((await s.turn('hello')).at(-1), { event: 'complete' })
  t.equal(
    (await postTurn(tp.url, '/platform/agent/custom', 'hi')).status,
    404,
    'its endpoint replaces the default path'
  )
  const host = tp.platform.pluginHost
  rmSync(join(root, 'agents'), { recursive: true, force: true })
  await host.rescan()
  await eventually(() => ai.agentNames().length === 0, 5000, 'agents unloaded')
  // the open socket: its next message gets an error frame and a close
  s.ws.send('still there?')
  t.match(await s.inbox.next((f) => f.type === 'error'), { code: 'PLT_ERR_AGENT_NOT_FOUND' })
  t.match(await s.closed, { code: 4404 })
  t.equal((await postTurn(tp.url, '/chat/custom', 'hi')).status, 404)
  t.equal((await refusedUpgrade(wsUrl(tp.url, CRIER))).status, 404, 'a new socket to the unloaded agent is refused')
  writePlugin(root, 'agents', { index: AGENTS })
  await host.rescan()
  await eventually(() => ai.agentNames().length === 2, 5000, 'agents back')
  const back = await postTurn(tp.url, '/chat/custom', 'back?')
  t.match(back.frames.at(-1), { event: 'complete' })
  // a path first named after start-up is mounted when its agent arrives
  t.equal((await postTurn(tp.url, '/chat/late', 'hi')).status, 404)
  writePlugin(root, 'late', {
    index: `import { definePlugin, agent } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [agent({ name: 'late', endpoint: '/chat/late' })] })
`
  })
  await host.rescan()
  await eventually(() => ai.agentNames().includes('late'), 5000, 'late agent loaded')
  t.match((await postTurn(tp.url, '/chat/late', 'hi')).frames.at(-1), { event: 'complete' })
  const late = await agentSocket(tp.url, '/chat/late')
  t.match((await late.turn('over a socket')).at(-1), { event: 'complete' })
  late.ws.close()
  await eventually(() => ai.sessions.activeCount() === 0, 5000, 'no session left')
})
