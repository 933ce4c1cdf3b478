// The fleet's A2A transport against a real platform serving its agents over A2A: a call, its
// failures as results, cancellation and timeout reaching the remote task, and where URLs come from.
import t from 'tap'
import { createServer } from 'node:http'
import type { AgentTransport } from '../../runtime/fleet/fleet-types.js'
import { AI } from '../../runtime/ai/index.js'
import { A2A } from '../../runtime/a2a/key.js'
import { A2aAgentTransport, remoteAgentEnvName, remoteAgentUrl } from '../../runtime/a2a/remote-agent.js'
import { remoteAgents } from '../../runtime/a2a/index.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { start, until, rpc } from './a2a-helpers.js'
import { fleetPlatform } from '../fleet/helpers.js'

const TOKEN = 'remote-caller-token-0123456789'
const ctx = (signal?: AbortSignal) => ({
  coordinationId: 'coord-1',
  coordinator: 'planner',
  principal: 'alice',
  ...(signal !== undefined ? { signal } : {})
})

t.test('a call to an agent another platform serves over A2A', async (t) => {
  const remote = await start({
    'platform.auth.tokens': [{ token: TOKEN, principal: 'fleet-peer' }],
    'platform.ai.endpoint.auth': 'required'
  })
  t.teardown(remote.close)
  const url = `${remote.url}/platform/agent/demo/a2a`
  // the fleet's own contract type: the transport fits it as it is
  const transport: AgentTransport = new A2aAgentTransport(url, { token: TOKEN })
  t.equal(transport.kind, 'a2a')

  const ok = await transport.call({ agent: 'demo', skill: 'run', args: { input: 'How do sandboxes work?' } }, ctx())
  t.match(ok, {
    agentName: 'demo',
    skillId: 'run',
    success: true,
    text: /According to platform_fact: .*isolate/,
    metadata: { transport: 'a2a', url, taskId: String, state: 'TASK_STATE_COMPLETED' }
  })
  t.type(ok.durationMs, 'number')
  const task = (await remote.platform.area(A2A).tasks.get(ok.metadata.taskId as string))!
  t.equal(task.owner, 'fleet-peer', 'the remote task belongs to the caller the token names')
  t.match(task.history[0]!.metadata, { skillId: 'run', args: { input: 'How do sandboxes work?' } })

  const anonymous = new A2aAgentTransport(url)
  const refused = await anonymous.call({ agent: 'demo', skill: 'run', args: { input: 'hi' } }, ctx())
  t.match(refused, { success: false, text: /A2A error -32600: .*requires an authenticated principal/ })
  const nobody = new A2aAgentTransport(`${remote.url}/platform/agent/nobody/a2a`, { token: TOKEN })
  // the A2A endpoint answers an unknown agent in JSON-RPC too (one body shape per endpoint)
  t.match(await nobody.call({ agent: 'nobody', skill: 'run', args: {} }, ctx()), {
    success: false,
    text: /A2A error -32600: Unknown agent/
  })
  const closed = new A2aAgentTransport('http://127.0.0.1:9/a2a', { token: TOKEN })
  t.match(await closed.call({ agent: 'x', skill: 'run', args: {} }, ctx()), { success: false, text: /failed/ })
  t.throws(() => new A2aAgentTransport('ftp://x/a2a'), /must be an http\(s\) URL/)
})

t.test('cancelling or timing out a call cancels the remote task and its turn', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  fake.chat = () => ({
    stream: sseEvents(Array.from({ length: 100 }, (_, i) => deltaChunk({ content: `w${i} ` }))),
    intervalMs: 50
  })
  const remote = await start({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model'
  })
  t.teardown(remote.close)
  const ai = remote.platform.area(AI)
  const tasks = remote.platform.area(A2A).tasks
  const url = `${remote.url}/platform/agent/demo/a2a`

  const ac = new AbortController()
  const pending = new A2aAgentTransport(url).call(
    { agent: 'demo', skill: 'run', args: { input: 'talk' } },
    ctx(ac.signal)
  )
  t.ok(await until(() => ai.inFlight() === 1), 'the remote turn runs')
  ac.abort()
  t.match(await pending, { success: false, text: 'A2A call cancelled' })
  t.ok(await until(() => ai.inFlight() === 0), 'the remote turn was cancelled')
  t.equal((await tasks.all())[0]!.state, 'TASK_STATE_CANCELED')

  // given up before the first event named the remote task: it is still found and cancelled
  const early = new AbortController()
  const racing = new A2aAgentTransport(url).call(
    { agent: 'demo', skill: 'run', args: { input: 'talk' } },
    ctx(early.signal)
  )
  early.abort()
  t.match(await racing, { success: false, text: 'A2A call cancelled' })
  t.ok(await until(() => ai.inFlight() === 0), 'the remote turn was cancelled')
  t.equal((await tasks.all())[0]!.state, 'TASK_STATE_CANCELED')
  const before = tasks.size
  const already = AbortSignal.abort()
  t.match(await new A2aAgentTransport(url).call({ agent: 'demo', skill: 'run', args: {} }, ctx(already)), {
    success: false,
    text: 'A2A call cancelled'
  })
  t.equal(tasks.size, before, 'an already cancelled call sends nothing')

  const slow = new A2aAgentTransport(url, { timeoutMs: 300 })
  const timedOut = await slow.call({ agent: 'demo', skill: 'run', args: { input: 'talk' } }, ctx())
  t.match(timedOut, { success: false, text: `A2A call to ${url} timed out after 300ms` })
  t.ok(await until(() => ai.inFlight() === 0), 'the remote turn was cancelled')
  t.equal((await tasks.all())[0]!.state, 'TASK_STATE_CANCELED')
})

t.test('where a remote agent is: AGENT_<NAME>_URL wins over platform.a2a.remote-agents', async (t) => {
  t.equal(remoteAgentEnvName('web-search'), 'AGENT_WEB_SEARCH_URL')
  const configured = { 'web-search': 'http://b/a2a', other: 'http://c/a2a' }
  t.equal(remoteAgentUrl('web-search', { AGENT_WEB_SEARCH_URL: 'http://a/a2a' }, configured), 'http://a/a2a')
  t.equal(remoteAgentUrl('web-search', {}, configured), 'http://b/a2a')
  t.equal(remoteAgentUrl('local', {}, configured), undefined)
  t.equal(remoteAgentEnvName('web-search', 'TOKEN'), 'AGENT_WEB_SEARCH_TOKEN')
  const tp = await start({ 'platform.a2a.remote-agents': configured })
  t.teardown(tp.close)
  t.same(tp.platform.config.get('platform.a2a.remote-agents'), configured)
  await t.rejects(start({ 'platform.a2a.remote-agents': { x: 'not a url' } }), /platform\.a2a\.remote-agents/)
})

t.test("a coordinator's fleet reaches an agent another platform serves, A2A in and out", async (t) => {
  const remote = await start()
  t.teardown(remote.close)
  // `far` is hosted nowhere here: platform.a2a.remote-agents says where it is served
  const relay = `
export default definePlugin({ agents: [
  agent({ name: 'relay', fleet: ['far'], async run(turn, ctx) {
    const r = await ctx.fleet.call('far', 'run', { input: turn.message })
    return (r.success ? 'far says: ' : 'far failed: ') + r.text
  } })
] })
`
  const tp = await fleetPlatform(
    { 'platform.a2a.remote-agents': { far: `${remote.url}/platform/agent/demo/a2a` } },
    'inline',
    relay
  )
  t.teardown(tp.close)
  const health = await (await fetch(`${tp.url}/api/admin/coordinators/relay/fleet`)).json()
  t.match(health.agents, [{ name: 'far', isAvailable: true, isLocal: false }], 'far counts as available, not local')
  const res = await rpc(`${tp.url}/platform/agent/relay/a2a`, {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'How do sandboxes work?' }] } }
  })
  const task = res.body.result.task
  t.equal(task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(task.status))
  t.match(task.artifacts[0].parts[0].text, /^far says: According to platform_fact: .*isolate/)
  // the remote platform ran it as an A2A task of its own
  const theirs = await remote.platform.area(A2A).tasks.all()
  t.equal(theirs.length, 1)
  t.match(theirs[0], { agent: 'demo', state: 'TASK_STATE_COMPLETED' })
  t.match(theirs[0]!.history[0]!.metadata, { skillId: 'run', args: { input: 'How do sandboxes work?' } })
  // and the calling platform journaled the dispatch like any other
  const journal = await (await fetch(`${tp.url}/api/admin/journal?agent=far`)).json()
  t.ok(
    journal.some((e: any) => e.type === 'AgentCompleted' && e.agentName === 'far'),
    'the dispatch to far is journaled'
  )
})

t.test('remoteAgents: one transport per agent, with AGENT_<NAME>_TOKEN as its bearer token', async (t) => {
  const remote = await start({
    'platform.auth.tokens': [{ token: TOKEN, principal: 'fleet-peer' }],
    'platform.ai.endpoint.auth': 'required'
  })
  t.teardown(remote.close)
  const url = `${remote.url}/platform/agent/demo/a2a`
  const find = remoteAgents({ far: url, open: url }, { AGENT_FAR_TOKEN: TOKEN })
  t.equal(find('nobody'), undefined)
  t.equal(find('far'), find('far'), 'kept, not made anew per call')
  t.match(await find('far')!.call({ agent: 'far', skill: 'run', args: { input: 'hi' } }, ctx()), { success: true })
  t.match(await find('open')!.call({ agent: 'open', skill: 'run', args: { input: 'hi' } }, ctx()), {
    success: false,
    text: /requires an authenticated principal/
  })
})

t.test('a peer that fails mid-stream, ends early or answers an error page: a failed result saying so', async (t) => {
  let answer: (id: unknown) => { status: number; type: string; body: string } = () => ({
    status: 200,
    type: 'text/plain',
    body: ''
  })
  const peer = createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => (raw += String(c)))
    req.on('end', () => {
      const a = answer((JSON.parse(raw) as { id: unknown }).id)
      res.writeHead(a.status, { 'content-type': a.type })
      res.end(a.body)
    })
  })
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => peer.close(() => resolve())))
  const { port } = peer.address() as { port: number }
  const url = `http://127.0.0.1:${port}/a2a`
  const call = () => new A2aAgentTransport(url).call({ agent: 'peer', skill: 'run', args: {} }, ctx())
  const sse = (...frames: unknown[]) => frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join('')
  const working = { id: 'task-1', contextId: 'ctx-1', status: { state: 'TASK_STATE_WORKING' } }

  answer = (id) => ({
    status: 200,
    type: 'text/event-stream',
    body: sse(
      { jsonrpc: '2.0', id, result: { task: working } },
      { jsonrpc: '2.0', id, error: { code: -32603, message: 'Internal error' } }
    )
  })
  t.match(await call(), { success: false, text: 'A2A error -32603: Internal error' })

  answer = (id) => ({
    status: 200,
    type: 'text/event-stream',
    body: sse({ jsonrpc: '2.0', id, result: { task: working } })
  })
  t.match(await call(), { success: false, text: `A2A stream from ${url} ended before the task did` })

  answer = () => ({ status: 502, type: 'text/html', body: '<h1>Bad gateway</h1>' })
  t.match(await call(), { success: false, text: `A2A endpoint ${url} answered HTTP 502: <h1>Bad gateway</h1>` })

  answer = (id) => ({
    status: 200,
    type: 'text/event-stream',
    body: sse(
      { jsonrpc: '2.0', id, result: { task: working } },
      {
        jsonrpc: '2.0',
        id,
        result: {
          statusUpdate: {
            taskId: 'task-1',
            contextId: 'ctx-1',
            status: {
              state: 'TASK_STATE_FAILED',
              message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'no luck' }] }
            }
          }
        }
      }
    )
  })
  t.match(await call(), {
    success: false,
    text: 'no luck',
    metadata: { taskId: 'task-1', contextId: 'ctx-1', state: 'TASK_STATE_FAILED' }
  })
})
