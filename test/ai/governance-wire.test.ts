import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installAreas } from '../../runtime/areas.js'
import { GOVERNANCE } from '../../runtime/governance/index.js'
import { type GovernancePolicy } from '../../runtime/contracts/index.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { lessonsStored } from './lessons.js'
import { agentSocket, deltas, isTerminal, type AgentSocket, type Frame } from './agent-clients.js'

// Governance as a WebSocket client of the agent endpoint sees it: an isolate-tier agent whose
// model is the fake OpenAI-compatible server, policies from YAML and from code, the kill switch
// armed over the admin API.
const dir = mkdtempSync(join(tmpdir(), 'gov-wire-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
mkdirSync(join(dir, 'plugins', 'toolbox'), { recursive: true })
writeFileSync(
  join(dir, 'plugins', 'toolbox', 'plugin.json'),
  JSON.stringify({ name: 'toolbox', version: '1.0.0', entry: 'index.js', sandbox: 'isolate' })
)
writeFileSync(
  join(dir, 'plugins', 'toolbox', 'index.js'),
  `import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'
export default definePlugin({
  agents: [agent({ name: 'room', systemPrompt: 'You answer a room.', broadcastReply: true }), agent({
    name: 'toolbox',
    systemPrompt: 'You run tools.',
    tools: [
      tool({ name: 'secret_lookup', description: 'Looks up secret values', run: () => 'classified' }),
      tool({ name: 'echo', description: 'Echoes its arguments', run: (args) => 'echo ' + JSON.stringify(args) }),
      tool({ name: 'stall', description: 'Stalls forever', run: () => { for (;;) {} } })
    ]
  })]
})
`
)
const native = join(dir, 'native.yaml')
writeFileSync(
  native,
  `policies:
  - {name: no-xyzzy, type: deny-list, config: {phrases: [xyzzy]}}
  - {name: release-advisor, type: preference, config: {phrases: [production], prefer: run release-bot, reason: change management}}
  - {name: pii, type: pii-redaction, config: {mode: redact}}
`
)
const rules = join(dir, 'tools.yaml')
writeFileSync(
  rules,
  `version: "1"
name: tool-rules
rules:
  - name: no-secrets
    condition: {field: tool_name, operator: eq, value: secret_lookup}
    action: deny
    priority: 10
    message: secrets stay put
defaults:
  action: allow
`
)

const DENY_XYZZY = 'Denied by no-xyzzy: deny-list: request matched a denied phrase'
const PREFER_RELEASE = 'Prefer: run release-bot (change management)'
const TOKEN = 'wire-admin-token'

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
const tp = await startTestPlatform(
  {
    'platform.plugins.dirs': [join(dir, 'plugins')],
    'platform.plugins.toolbox': { limits: { timeoutMs: 300 } },
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': server.url,
    'platform.ai.openai.model': 'test-model',
    'platform.ai.governance.policy-files': [native, rules],
    'platform.ai.governance.kill-switch.enabled': true,
    'platform.admin.http-write-enabled': true,
    'platform.auth.tokens': [{ token: TOKEN, principal: 'ops', roles: ['admin'] }]
  },
  { install: installAreas }
)
t.teardown(tp.close)
const gov = tp.platform.area(GOVERNANCE)
const PATH = '/platform/agent/toolbox'

/** The model: tool calls when asked for tools (until the results are back), else `ok: <message>`. */
server.chat = (body: any) => {
  const msgs: any[] = body.messages
  const last = msgs.at(-1)
  if (last.role === 'tool') return text('tools done')
  if (String(last.content).includes('use the tools')) {
    const call = (i: number, name: string, args: unknown) => ({
      index: i,
      id: `call_${name}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) }
    })
    return {
      stream: sseEvents([
        deltaChunk({
          tool_calls: [call(0, 'secret_lookup', {}), call(1, 'echo', { text: 'hi' }), call(2, 'stall', {})]
        }),
        deltaChunk({}, 'tool_calls'),
        usageChunk(10, 5)
      ])
    }
  }
  return text(`ok: ${String(last.content)}`)
}
function text(s: string) {
  return { stream: sseEvents([deltaChunk({ content: s }, 'stop'), usageChunk(4, 2)]) }
}
const lastSystemPrompt = (): string => String(server.on('/chat/completions').at(-1)?.messages[0]?.content ?? '')

async function socket(t: Test): Promise<AgentSocket> {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  t.ok(s.session, 'greeted with a session')
  return s
}
const say = (message: string, conversationId = 'c1'): string => JSON.stringify({ message, conversationId })
const metadata = (frames: Frame[], key: string): Frame | undefined =>
  frames.find((f) => f.type === 'metadata' && f.key === key)

t.test('a deny ends the turn with an error frame; the next turn carries the feedback frames', async (t) => {
  const s = await socket(t)
  server.reset()
  const denied = await s.turn(say('please say xyzzy'))
  t.same(
    denied.map((f) => f.type ?? f.event),
    ['error'],
    'only the terminal error frame'
  )
  t.match(denied[0], {
    type: 'error',
    data: `denied by policy no-xyzzy: deny-list: request matched a denied phrase`,
    sessionId: s.session!.sessionId
  })
  t.equal(server.on('/chat/completions').length, 0, 'the model was never asked')

  const next = await s.turn(say('hello again'))
  t.match(next.at(-1), { event: 'complete', data: { summary: 'ok: hello again' } })
  t.match(
    next.slice(-3),
    [
      { type: 'metadata', key: 'ai.governance.feedback.injected', value: 1 },
      { type: 'metadata', key: 'ai.governance.feedback.lines', value: [DENY_XYZZY] },
      { event: 'complete' }
    ],
    'the two feedback frames come just before complete'
  )
  t.match(lastSystemPrompt(), `- ${DENY_XYZZY}`, 'the model got the guidance')

  // an anonymous caller's conversation id is scoped to its connection: another socket using the
  // same id is another subject
  const other = await socket(t)
  const clean = await other.turn(say('hello again'))
  t.equal(metadata(clean, 'ai.governance.feedback.injected'), undefined, 'another session sees nothing')
  t.match(clean.at(-1), { event: 'complete' })
})

t.test('a prefer admits the turn and its feedback frames come on the same turn', async (t) => {
  const s = await socket(t)
  server.reset()
  const frames = await s.turn(say('how do I deploy to production?', 'c-prefer'))
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'ok: how do I deploy to production?' } })
  t.match(frames.slice(-3), [
    { key: 'ai.governance.feedback.injected', value: 1 },
    { key: 'ai.governance.feedback.lines', value: [PREFER_RELEASE] },
    { event: 'complete' }
  ])
  t.match(lastSystemPrompt(), `- ${PREFER_RELEASE}`)
  t.notOk(
    frames.some((f) => f.type === 'error'),
    'no error'
  )
})

t.test('a broadcastReply room: the guidance reaches the model, the frames stay off the wire', async (t) => {
  const s = await agentSocket(tp.url, '/platform/agent/room')
  t.teardown(() => s.ws.close())
  server.reset()
  const frames = await s.turn(say('how do I deploy to production?', 'c-room'))
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'ok: how do I deploy to production?' } })
  t.match(lastSystemPrompt(), `- ${PREFER_RELEASE}`, 'injected')
  t.equal(
    frames.filter((f) => f.type === 'metadata' && String(f.key).startsWith('ai.governance.feedback')).length,
    0,
    'no feedback frames: the room is not the subject'
  )
})

t.test('a transform is invisible except through its effect', async (t) => {
  const s = await socket(t)
  server.reset()
  const frames = await s.turn(say('write to bob@example.com', 'c-pii'))
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'ok: write to [redacted-email]' } })
  t.equal(frames.filter((f) => f.type === 'error').length, 0)
  t.equal(metadata(frames, 'ai.governance.feedback.injected'), undefined, 'a transform is not guidance')
  const sent = JSON.stringify(server.on('/chat/completions'))
  t.notMatch(sent, 'bob@example.com', 'the model never saw the address')
  // nor on the next turn, through the conversation's history
  const next = await s.turn(say('and again', 'c-pii'))
  t.match(next.at(-1), { event: 'complete' })
  t.equal(server.on('/chat/completions').length, 2)
  t.notMatch(JSON.stringify(server.on('/chat/completions')[1].messages), 'bob@example.com', 'not in the history either')
})

t.test('a throwing policy denies the turn (fail closed)', async (t) => {
  const exploder: GovernancePolicy = {
    name: 'exploder',
    source: 'code:exploder',
    version: '1',
    className: 'Exploder',
    evaluate: (c) => {
      if (c.request.message.includes('boom')) throw new Error('policy blew up')
      return { decision: 'admit' }
    }
  }
  gov.setSource('test:exploder', [exploder])
  t.teardown(() => gov.removeSource('test:exploder'))
  const s = await socket(t)
  const frames = await s.turn(say('boom', 'c-throw'))
  t.match(frames, [{ type: 'error', data: 'denied by policy exploder: policy blew up' }])
  const after = await s.turn(say('calm', 'c-throw'))
  t.match(after.at(-1), { event: 'complete', data: { summary: 'ok: calm' } })
  t.equal(
    metadata(after, 'ai.governance.feedback.injected'),
    undefined,
    'an error decision is not a lesson: only deny and prefer are'
  )
})

t.test('the kill switch, armed over the admin API, denies every turn until disarmed', async (t) => {
  const s = await socket(t)
  const admin = (action: string, body: unknown) =>
    fetch(`${tp.url}/api/admin/governance/kill-switch/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
  t.equal((await admin('arm', { reason: 'incident 42' })).status, 200)
  let disarmed = false
  t.teardown(async () => {
    if (!disarmed) await admin('disarm', {})
  })
  for (const m of ['hello', 'how do I deploy to production?']) {
    const frames = await s.turn(say(m, 'c-ks'))
    t.match(frames, [{ type: 'error', data: /incident 42/ }], `denied: ${m}`)
  }
  t.equal((await admin('disarm', {})).status, 200)
  disarmed = true
  const frames = await s.turn(say('hello', 'c-ks'))
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'ok: hello' } })
  t.equal(metadata(frames, 'ai.governance.feedback.injected'), undefined, 'the switch left no guidance behind')
})

t.test('tools in the isolate tier: one denied by a rule, one that runs, one that times out', async (t) => {
  const s = await socket(t)
  server.reset()
  const frames = await s.turn(say('use the tools', 'c-tools'))
  const tools = frames.filter((f) => typeof f.event === 'string' && f.event.startsWith('tool-'))
  t.match(tools, [
    { event: 'tool-start', data: { toolName: 'secret_lookup' } },
    {
      event: 'tool-error',
      data: { toolName: 'secret_lookup', error: /denied by policy tool-rules: secrets stay put/ }
    },
    { event: 'tool-start', data: { toolName: 'echo', arguments: { text: 'hi' } } },
    { event: 'tool-result', data: { toolName: 'echo', result: 'echo {"text":"hi"}' } },
    { event: 'tool-start', data: { toolName: 'stall' } },
    { event: 'tool-error', data: { toolName: 'stall', error: /exceeded its time limit of 300 ms/ } }
  ])
  t.equal(tools.length, 6)
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'tools done' } })
  t.equal(deltas(frames), 'tools done')
  t.equal(frames.filter(isTerminal).length, 1)
  // the model saw every outcome as a tool message, the errors as errors
  const second = server.on('/chat/completions')[1]
  const results = second.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content)
  t.match(results, [/^error: tool call denied/, /^echo /, /^error: .*time limit/])

  // the tool deny is the session's guidance on the next turn of another conversation
  const next = await s.turn(say('anything else?', 'c-tools-2'))
  t.match(metadata(next, 'ai.governance.feedback.lines'), {
    value: ['Denied by tool-rules: secrets stay put']
  })
})

t.test("durable recall on the wire: a principal's lesson and conversation survive a restart", async (t) => {
  const data = mkdtempSync(join(dir, 'data-'))
  const cfg = {
    'platform.data-dir': data,
    'platform.plugins.dirs': [join(dir, 'plugins')],
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': server.url,
    'platform.ai.openai.model': 'test-model',
    'platform.ai.governance.policy-files': [native],
    'platform.ai.governance.memory.enabled': true,
    'platform.auth.tokens': [{ token: 'alice-token-0123456789', principal: 'alice', roles: [] }]
  }
  const auth = { authorization: 'Bearer alice-token-0123456789' }
  const a = await startTestPlatform(cfg, { install: installAreas })
  const before = await agentSocket(a.url, PATH, auth)
  t.match((await before.turn(say('my name is Zed', 'c-durable'))).at(-1), { event: 'complete' })
  t.match(await before.turn(say('say xyzzy', 'c-durable')), [{ type: 'error', data: /no-xyzzy/ }])
  before.ws.close()
  // one deny, kept under the conversation's, session's and user's namespace
  await lessonsStored(a, 3)
  await a.close()

  const b = await startTestPlatform(cfg, { install: installAreas })
  t.teardown(b.close)
  // a one-shot POST (SSE) of the same principal and conversation, after the restart
  server.reset()
  const res = await fetch(b.url + PATH, {
    method: 'POST',
    headers: auth,
    body: say('hello after the restart', 'c-durable')
  })
  t.equal(res.status, 200)
  const frames: Frame[] = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)))
  t.match(frames.slice(-3), [
    { key: 'ai.governance.feedback.injected', value: 1 },
    { key: 'ai.governance.feedback.lines', value: [DENY_XYZZY] },
    { event: 'complete', data: { summary: 'ok: hello after the restart' } }
  ])
  // the model got both back: the conversation from memory (not the denied turn) and the lesson
  const sent = server.on('/chat/completions')[0].messages as { role: string; content: string }[]
  t.match(sent[0], { role: 'system', content: `- ${DENY_XYZZY}` })
  t.match(sent.slice(1), [
    { role: 'user', content: 'my name is Zed' },
    { role: 'assistant', content: 'ok: my name is Zed' },
    { role: 'user', content: 'hello after the restart' }
  ])
  t.equal(sent.length, 4, 'the denied prompt is not in the history')
  // another principal's conversation of the same id learns nothing from alice's
  const anon = await agentSocket(b.url, PATH)
  t.teardown(() => anon.ws.close())
  const other = await anon.turn(say('hello', 'c-durable'))
  t.equal(metadata(other, 'ai.governance.feedback.injected'), undefined)
})
