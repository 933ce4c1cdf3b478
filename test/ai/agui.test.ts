// The AG-UI endpoint over real sockets: each stream is read by the official client's own pipeline
// (its SSE parser, event schema enforcement and verifyEvents), and once by its HttpAgent.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { from, lastValueFrom, toArray } from 'rxjs'
import {
  HttpAgent,
  enforceEvents,
  runHttpRequest,
  transformHttpEventStream,
  verifyEvents,
  type BaseEvent
} from '@ag-ui/client'
import { EventSchema, RunAgentInputSchema } from '@ag-ui/core/schemas'
import { AI, type TurnEvent } from '../../runtime/ai/index.js'
import { AguiRun, type AguiEvent } from '../../runtime/ai/agui-events.js'
import { installAreas } from '../../runtime/areas.js'
import { GOVERNANCE } from '../../runtime/governance/index.js'
import { type GovernancePolicy } from '../../runtime/contracts/index.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'

const PLUGINS = join(fileURLToPath(new URL('../../', import.meta.url)), 'plugins')
const start = (config: Record<string, unknown> = {}): Promise<TestPlatform> =>
  startTestPlatform({ 'platform.plugins.dirs': [PLUGINS], ...config }, { install: installAreas })

type Ev = BaseEvent & Record<string, any>
let seq = 0
function input(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  seq++
  return {
    threadId: `thread-${seq}`,
    runId: `run-${seq}`,
    state: { step: seq },
    messages: [{ id: `m-${seq}`, role: 'user', content: text }],
    tools: [],
    context: [],
    forwardedProps: {},
    ...extra
  }
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal !== undefined ? { signal } : {})
  })

/** The events of one run as the official client reads them; its verifier throws on a protocol violation. */
async function run(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Ev[]> {
  const events = await lastValueFrom(
    transformHttpEventStream(runHttpRequest(() => post(url, body, headers))).pipe(
      enforceEvents(),
      verifyEvents(),
      toArray()
    )
  )
  // and every event as the protocol's schema declares it, nothing stripped or coerced
  for (const e of events) EventSchema.parse(e)
  return events as Ev[]
}

const types = (events: Ev[]): string[] => events.map((e) => e.type)
const text = (events: Ev[]) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('')

async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 10))
  }
  return true
}

t.test('demo runtime: the demo agent over AG-UI', async (t) => {
  const tp = await start()
  t.teardown(tp.close)
  const url = `${tp.url}/platform/agent/demo/agui`
  const ai = tp.platform.area(AI)

  t.test('a sandbox question streams the platform_fact tool call, its result and the answer', async (t) => {
    const res = await post(url, input('How do sandboxes work?'))
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^text\/event-stream/)
    await res.body?.cancel()
    const body = input('How do sandboxes work?', { state: { draft: 'x', n: [1, 2] } })
    const events = await run(url, body)
    t.same(types(events).slice(0, 1), ['RUN_STARTED'])
    t.match(events[0], { threadId: body.threadId, runId: body.runId })
    t.equal(events.at(-1)!.type, 'RUN_FINISHED', 'ends with RUN_FINISHED')
    t.match(events.at(-1), { threadId: body.threadId, runId: body.runId, usage: [{ model: 'demo-1' }] })
    const start = events.find((e) => e.type === 'TOOL_CALL_START')!
    t.match(start, { toolCallName: 'platform_fact', toolCallId: /./ })
    const callId = start.toolCallId
    const args = events.filter((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === callId)
    t.same(JSON.parse(args.map((e) => e.delta).join('')), { topic: 'sandbox' })
    t.ok(events.some((e) => e.type === 'TOOL_CALL_END' && e.toolCallId === callId))
    const result = events.find((e) => e.type === 'TOOL_CALL_RESULT')!
    t.match(result, { toolCallId: callId, role: 'tool', content: /isolate/ })
    t.ok(
      types(events).indexOf('TOOL_CALL_RESULT') < types(events).indexOf('TEXT_MESSAGE_START'),
      'the answer follows the tool result'
    )
    t.match(text(events), /According to platform_fact: .*isolate/)
    t.same(events.find((e) => e.type === 'STATE_SNAPSHOT')?.snapshot, { draft: 'x', n: [1, 2] })
    t.equal(ai.inFlight(), 0)
    t.equal(ai.sessions.activeCount('demo'), 0, 'the run session ended')
  })

  t.test('earlier messages are the history, the last user message the turn', async (t) => {
    const events = await run(
      url,
      input('hello again', {
        messages: [
          { id: 'a', role: 'user', content: 'first words' },
          { id: 'b', role: 'assistant', content: 'first answer' },
          { id: 'c', role: 'user', content: [{ type: 'text', text: 'hello again' }] }
        ]
      })
    )
    t.match(text(events), /^You said: "hello again"\./)
    // the demo counts every history token as input: 'first words' + 'first answer' are four
    const without = await run(url, input('hello again'))
    const tokens = (es: Ev[]) => es.at(-1)!.usage[0].inputTokens as number
    t.equal(tokens(events) - tokens(without), 4, 'the history reached the runtime')
  })

  t.test('the official HttpAgent runs it and keeps the conversation', async (t) => {
    const agent = new HttpAgent({ url, threadId: 'thread-http-agent', initialState: { from: 'client' } })
    agent.addMessage({ id: 'u1', role: 'user', content: 'How do sandboxes work?' })
    const seen: string[] = []
    const { result, newMessages } = await agent.runAgent(
      { runId: 'run-http-agent' },
      { onEvent: ({ event }) => void seen.push(event.type) }
    )
    t.equal(seen[0], 'RUN_STARTED')
    t.equal(seen.at(-1), 'RUN_FINISHED')
    t.match(result, { text: /According to platform_fact/ })
    const roles = newMessages.map((m) => m.role)
    t.same(roles, ['assistant', 'tool', 'assistant'], 'tool call, its result, the answer')
    t.match(newMessages[0], { toolCalls: [{ function: { name: 'platform_fact' } }] })
    t.same(agent.state, { from: 'client' }, 'state snapshot applied')
    // the next run sends the whole conversation back: the platform reads it as history
    agent.addMessage({ id: 'u2', role: 'user', content: 'thanks' })
    const second = await agent.runAgent({ runId: 'run-http-agent-2' })
    t.match(second.newMessages.at(-1), { role: 'assistant', content: /You said: "thanks"/ })
  })

  t.test('a governance deny ends the run with RUN_ERROR naming the policy', async (t) => {
    const gov = tp.platform.area(GOVERNANCE)
    const deny: GovernancePolicy = {
      name: 'no-cake',
      source: 'code:no-cake',
      version: '1',
      className: 'TestPolicy',
      evaluate: (c) =>
        /cake/.test(c.request.message) ? { decision: 'deny', reason: 'no cake talk' } : { decision: 'admit' }
    }
    gov.setSource('agui-test', [deny])
    t.teardown(() => gov.removeSource('agui-test'))
    const events = await run(url, input('tell me about cake'))
    t.same(types(events), ['RUN_STARTED', 'RUN_ERROR'])
    t.match(events[1], { code: 'denied', message: /no-cake: no cake talk/ })
  })

  t.test(
    'a prefer rides on the run as a CUSTOM event; a denied tool is a failed result, not a failed run',
    async (t) => {
      const gov = tp.platform.area(GOVERNANCE)
      const steer: GovernancePolicy = {
        name: 'steer',
        source: 'code:steer',
        version: '1',
        className: 'TestPolicy',
        evaluate: (c) =>
          c.request.metadata.action === 'call_tool'
            ? { decision: 'deny', reason: 'no facts today' }
            : { decision: 'prefer', preferred: 'short answers', reason: 'house style' }
      }
      gov.setSource('agui-test', [steer])
      t.teardown(() => gov.removeSource('agui-test'))
      const events = await run(url, input('How do sandboxes work?'))
      t.match(
        events.find((e) => e.type === 'TOOL_CALL_RESULT'),
        {
          content: /^error: tool call denied by policy steer: no facts today/
        }
      )
      // the prefer steers this same turn, so its guidance line comes first, then the preference
      t.match(
        events.filter((e) => e.type === 'CUSTOM'),
        [
          { name: 'ai.governance.feedback', value: { injected: 1, lines: [/Prefer: short answers/] } },
          {
            name: 'ai.governance.preferences',
            value: [{ policy: 'steer', preferred: 'short answers', reason: 'house style' }]
          }
        ]
      )
      t.equal(events.at(-1)!.type, 'RUN_FINISHED')
    }
  )

  t.test('bad input: 400 with the catalogue body, nothing run', async (t) => {
    const cases: [string, unknown, RegExp][] = [
      ['no threadId', { runId: 'r', messages: [{ id: '1', role: 'user', content: 'hi' }] }, /needs 'threadId'/],
      ['messages not an array', { ...input('x'), messages: 'hi' }, /messages must be array/],
      ['no messages', { ...input('x'), messages: [] }, /messages/],
      ['unknown role', { ...input('x'), messages: [{ id: '1', role: 'robot', content: 'hi' }] }, /role must be one of/],
      ['user without content', { ...input('x'), messages: [{ id: '1', role: 'user' }] }, /needs 'content'/],
      [
        'last message not the user',
        { ...input('x'), messages: [{ id: '1', role: 'assistant', content: 'hi' }] },
        /last message must be the user's/
      ],
      [
        'tool call arguments not JSON',
        {
          ...input('x'),
          messages: [
            {
              id: '1',
              role: 'assistant',
              toolCalls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }]
            },
            { id: '2', role: 'user', content: 'hi' }
          ]
        },
        /toolCalls\[0\]\.function\.arguments is not JSON/
      ],
      ['no text', { ...input('x'), messages: [{ id: '1', role: 'user', content: [] }] }, /no text/]
    ]
    for (const [what, body, detail] of cases) {
      const res = await post(url, body)
      t.equal(res.status, 400, what)
      const b = (await res.json()) as Record<string, string>
      t.equal(b.code, 'PLT_ERR_INVALID_AGUI_INPUT', what)
      t.match(b.error, detail, what)
      t.match(b.hint, /threadId/, what)
    }
    // where the protocol's own schema has a view, it agrees
    t.notOk(RunAgentInputSchema.safeParse(cases[0]![1]).success, 'official schema rejects a missing threadId')
    t.notOk(RunAgentInputSchema.safeParse(cases[3]![1]).success, 'official schema rejects an unknown role')
    t.ok(RunAgentInputSchema.safeParse(input('fine')).success, 'official schema accepts what we send')
    const malformed = await post(url, '{"threadId":')
    t.equal(malformed.status, 400)
    t.match(await malformed.json(), { code: 'PLT_ERR_MALFORMED_JSON' })
    const huge = await post(url, input('x'.repeat(10 * 1024 * 1024)))
    t.equal(huge.status, 413, 'a 10 MB message is over the body limit')
    t.match(await huge.json(), { code: 'PLT_ERR_BODY_TOO_LARGE' })
    t.equal(ai.sessions.activeCount(), 0, 'no session opened')
    t.equal(ai.inFlight(), 0, 'no turn started')
  })

  t.test('an unknown agent is a 404; a known one is served', async (t) => {
    const res = await post(`${tp.url}/platform/agent/nobody/agui`, input('hi'))
    t.equal(res.status, 404)
    t.match(await res.json(), {
      code: 'PLT_ERR_AGENT_NOT_FOUND',
      error: "Unknown agent '/platform/agent/nobody/agui'",
      hint: /plugin/
    })
  })

  t.test("an agent's protocols are what it is served over", async (t) => {
    const demo = ai.agents().find((a) => a.name === 'demo')!
    t.same(demo.protocols, ['mcp', 'agui', 'a2a'])
    t.same(demo.endpoints, {
      mcp: '/platform/agent/demo/mcp',
      agui: '/platform/agent/demo/agui',
      a2a: '/platform/agent/demo/a2a'
    })
    t.match(demo, { path: '/platform/agent/demo', plugin: /./, version: /./, headless: false })
  })
})

t.test('agents come and go with hot reload; a custom endpoint moves the AG-UI path', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'agui-plugins-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const tp = await start({ 'platform.plugins.dirs': [PLUGINS, root] })
  t.teardown(tp.close)
  const ai = tp.platform.area(AI)
  const host = tp.platform.pluginHost
  const custom = `${tp.url}/custom/roamer/agui`
  t.equal((await post(custom, input('hi'))).status, 404, 'nothing there before the plugin')
  mkdirSync(join(root, 'roamer'))
  writeFileSync(
    join(root, 'roamer', 'plugin.json'),
    JSON.stringify({ name: 'roamer', version: '1.0.0', entry: 'index.js', sandbox: 'isolate' })
  )
  writeFileSync(
    join(root, 'roamer', 'index.js'),
    `import { definePlugin, agent } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [
  agent({ name: 'roamer', endpoint: '/custom/roamer', systemPrompt: 'You are the roamer. Secret: R-1.' }),
  agent({ name: 'deep', endpoint: '/deep/mcp', systemPrompt: 'You are the digger. Secret: D-2.' })
] })
`
  )
  await host.rescan()
  const events = await run(custom, input('where are you?'))
  // the roamer answered (in its role), and its instructions stay its own
  t.match(text(events), /^You said: "where are you\?"\. As the roamer: /)
  t.notMatch(text(events), 'R-1')
  const res = await post(`${tp.url}/platform/agent/roamer/agui`, input('hi'))
  t.equal(res.status, 404, 'not at the default path: the agent named its own')
  t.match(
    ai.agents().find((a) => a.name === 'roamer'),
    {
      path: '/custom/roamer',
      protocols: ['mcp', 'agui', 'a2a'],
      endpoints: { agui: '/custom/roamer/agui', a2a: '/custom/roamer/a2a' }
    }
  )
  // an endpoint ending in /mcp names only the MCP path: AG-UI stays at the default one
  t.match(
    ai.agents().find((a) => a.name === 'deep'),
    {
      path: '/platform/agent/deep',
      protocols: ['mcp', 'agui', 'a2a'],
      endpoints: { mcp: '/deep/mcp', agui: '/platform/agent/deep/agui', a2a: '/platform/agent/deep/a2a' }
    }
  )
  const deep = text(await run(`${tp.url}/platform/agent/deep/agui`, input('down?')))
  t.match(deep, /As the digger: /, 'the deep agent answered')
  t.notMatch(deep, 'D-2')
  rmSync(join(root, 'roamer'), { recursive: true, force: true })
  await host.rescan()
  const gone = await post(custom, input('hi'))
  t.equal(gone.status, 404, 'gone with its plugin')
  t.match(await gone.json(), { code: 'PLT_ERR_AGENT_NOT_FOUND' })
  t.notOk(ai.agents().some((a) => a.name === 'roamer'))
})

t.test('without MCP an agent lists AG-UI and A2A only', async (t) => {
  const tp = await start({ 'platform.mcp.enabled': false })
  t.teardown(tp.close)
  t.same(
    tp.platform
      .area(AI)
      .agents()
      .find((a) => a.name === 'demo')?.protocols,
    ['agui', 'a2a']
  )
})

t.test('platform.ai.endpoint.auth=required: 401 without a principal, served with one', async (t) => {
  const tp = await start({
    'platform.ai.endpoint.auth': 'required',
    'platform.auth.tokens': [{ token: 'agui-secret-token-0123', principal: 'alice' }]
  })
  t.teardown(tp.close)
  const url = `${tp.url}/platform/agent/demo/agui`
  const res = await post(url, input('hi'))
  t.equal(res.status, 401)
  t.match(await res.json(), { code: 'PLT_ERR_AGENT_AUTH_REQUIRED', hint: /platform\.ai\.endpoint\.auth/ })
  const events = await run(url, input('hi'), { authorization: 'Bearer agui-secret-token-0123' })
  t.equal(events.at(-1)!.type, 'RUN_FINISHED')
})

t.test('openai runtime against a fake OpenAI-compatible server', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  const tp = await start({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model',
    'platform.ai.openai.idle-timeout-ms': 10_000
  })
  t.teardown(tp.close)
  const url = `${tp.url}/platform/agent/demo/agui`
  const ai = tp.platform.area(AI)

  t.test('streamed text, with the history sent to the model', async (t) => {
    fake.reset()
    fake.chat = () => ({
      stream: sseEvents([
        deltaChunk({ role: 'assistant', content: 'Hel' }),
        deltaChunk({ content: 'lo!' }),
        deltaChunk({}, 'stop'),
        usageChunk(12, 2)
      ])
    })
    const events = await run(
      url,
      input('and now?', {
        messages: [
          { id: 'a', role: 'user', content: 'earlier' },
          { id: 'b', role: 'assistant', content: 'before' },
          { id: 'c', role: 'user', content: 'and now?' }
        ]
      })
    )
    t.same(types(events), [
      'RUN_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STATE_SNAPSHOT',
      'RUN_FINISHED'
    ])
    t.equal(text(events), 'Hello!')
    t.match(events.at(-1), {
      usage: [{ model: 'test-model', inputTokens: 12, outputTokens: 2, totalTokens: 14 }],
      result: { text: 'Hello!' }
    })
    const sent = fake.on('/chat/completions')[0].messages as { role: string; content: string }[]
    t.same(
      sent.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]),
      [
        ['user', 'earlier'],
        ['assistant', 'before'],
        ['user', 'and now?']
      ]
    )
  })

  t.test('a tool call streamed in pieces runs the tool and feeds the result back', async (t) => {
    fake.reset()
    fake.chat = (body: { messages: { role: string; content: string }[] }) => {
      const result = body.messages.find((m) => m.role === 'tool')
      if (result !== undefined)
        return { stream: sseEvents([deltaChunk({ content: `Done: ${result.content.slice(0, 20)}` }, 'stop')]) }
      const call = (args: string, first: boolean) =>
        deltaChunk({
          tool_calls: [
            first
              ? { index: 0, id: 'call_x', type: 'function', function: { name: 'platform_fact', arguments: args } }
              : { index: 0, function: { arguments: args } }
          ]
        })
      return {
        stream: sseEvents([call('{"topic"', true), call(':"sandbox"}', false), deltaChunk({}, 'tool_calls')])
      }
    }
    const events = await run(url, input('sandboxes?'))
    t.same(types(events), [
      'RUN_STARTED',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STATE_SNAPSHOT',
      'RUN_FINISHED'
    ])
    t.match(events[1], { toolCallId: 'call_x', toolCallName: 'platform_fact' })
    t.same(JSON.parse(events[2]!.delta), { topic: 'sandbox' })
    t.match(events[4], { toolCallId: 'call_x', content: /isolate/ })
    t.match(text(events), /^Done: /)
    t.equal(fake.on('/chat/completions').length, 2, 'the model was asked again with the result')
  })

  t.test('100 runs abandoned mid-stream leave no turn and no session behind', async (t) => {
    fake.reset()
    fake.chat = () => ({
      stream: sseEvents(Array.from({ length: 50 }, () => deltaChunk({ content: 'x ' }))),
      intervalMs: 20
    })
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const abort = new AbortController()
        const res = await post(url, input(`run ${i}`), {}, abort.signal)
        const reader = res.body!.getReader()
        let seen = ''
        while (!seen.includes('RUN_STARTED')) seen += new TextDecoder().decode((await reader.read()).value)
        abort.abort()
      })
    )
    t.ok(await until(() => ai.inFlight() === 0, 10_000), 'in-flight turns back to 0')
    t.ok(await until(() => ai.sessions.activeCount() === 0, 10_000), 'sessions back to 0')
    const sse = (await tp.platform.metrics.openConnections.get()).values.find((v) => v.labels.transport === 'sse')
    t.equal(sse?.value, 0, 'no SSE stream left open')
  })

  t.test('a runtime error is RUN_ERROR', async (t) => {
    fake.chat = () => ({ status: 500, json: { error: { message: 'model exploded' } } })
    const events = await run(url, input('hi'))
    t.same(types(events), ['RUN_STARTED', 'RUN_ERROR'])
    t.match(events[1], { code: 'runtime', message: /500|model exploded/ })
  })

  t.test('a client that goes away mid-run cancels the turn', async (t) => {
    fake.reset()
    const words = Array.from({ length: 100 }, (_, i) => deltaChunk({ content: `w${i} ` }))
    fake.chat = () => ({ stream: sseEvents(words), intervalMs: 50 })
    const abort = new AbortController()
    const res = await post(url, input('talk slowly'), {}, abort.signal)
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes('TEXT_MESSAGE_CONTENT')) seen += new TextDecoder().decode((await reader.read()).value)
    t.equal(ai.inFlight(), 1, 'the turn is running')
    t.equal(ai.sessions.activeCount('demo'), 1, 'its session is open')
    const cut = Date.now()
    abort.abort()
    t.ok(await until(() => ai.inFlight() === 0), 'in-flight turns back to 0')
    t.ok(Date.now() - cut < 2000, 'cancelled promptly, not after the 5 s stream')
    t.ok(await until(() => ai.sessions.activeCount() === 0), 'session ended')
    t.equal(fake.on('/chat/completions').length, 1)
  })
})

t.test('a platform shutting down mid-run ends the stream and the turn cleanly', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  fake.chat = () => ({
    stream: sseEvents(Array.from({ length: 100 }, () => deltaChunk({ content: 'x ' }))),
    intervalMs: 50
  })
  const tp = await start({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model'
  })
  const ai = tp.platform.area(AI)
  const res = await post(`${tp.url}/platform/agent/demo/agui`, input('talk'))
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes('TEXT_MESSAGE_CONTENT')) seen += new TextDecoder().decode((await reader.read()).value)
  const started = Date.now()
  await tp.close()
  t.ok(Date.now() - started < 3000, 'close did not wait for the 5 s stream')
  for (;;) if ((await reader.read()).done) break
  t.pass('the client saw the stream end')
  t.ok(await until(() => ai.inFlight() === 0), 'the turn unwound')
  t.equal(ai.sessions.activeCount(), 0)
  t.same(
    tp.logs.filter((l) => (l.level as number) >= 50),
    [],
    'nothing logged as an error'
  )
})

t.test('event mapping: text then a tool call in one round, feedback, the verifier agrees', async (t) => {
  const out: AguiEvent[] = []
  const mapped = new AguiRun('th', 'rn', undefined, (e) => out.push(e))
  const turn: TurnEvent[] = [
    { type: 'text', delta: 'Let me check. ' },
    { type: 'tool-start', call: { id: 'c1', name: 'lookup', arguments: { q: 'a' } } },
    { type: 'tool-error', id: 'c1', name: 'lookup', message: 'timed out' },
    { type: 'usage', usage: { input: 3, output: 2, cachedInput: 1, total: 5, model: 'm' } },
    { type: 'text', delta: 'Sorry.' },
    { type: 'usage', usage: { input: 4, output: 1, cachedInput: 0, total: 5, model: 'm' } },
    { type: 'feedback', injected: 1, lines: ['Denied before: x'] },
    { type: 'complete', text: 'Let me check. Sorry.', preferences: [], userMessage: 'hi' },
    { type: 'text', delta: 'ignored after the end' }
  ]
  mapped.start()
  for (const e of turn) mapped.event(e)
  mapped.fail('not reached: the run already ended')
  const verified = (await lastValueFrom(from(out as BaseEvent[]).pipe(verifyEvents(), toArray()))) as Ev[]
  for (const e of verified) EventSchema.parse(e)
  t.same(types(verified), [
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'TOOL_CALL_START',
    'TOOL_CALL_ARGS',
    'TOOL_CALL_END',
    'TOOL_CALL_RESULT',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'CUSTOM',
    'TEXT_MESSAGE_END',
    'STATE_SNAPSHOT',
    'RUN_FINISHED'
  ])
  t.equal(verified[4]!.parentMessageId, verified[1]!.messageId, "the call belongs to the round's text message")
  t.not(verified[8]!.messageId, verified[1]!.messageId, 'the answer after the result is a new message')
  t.match(verified[7], { content: 'error: timed out' })
  t.match(verified[10], { name: 'ai.governance.feedback', value: { injected: 1, lines: ['Denied before: x'] } })
  t.same(verified[12]!.snapshot, {}, 'no state sent: an empty snapshot')
  t.same(verified.at(-1)!.usage, [
    { model: 'm', inputTokens: 7, outputTokens: 3, totalTokens: 10, cachedInputTokens: 1 }
  ])
})
