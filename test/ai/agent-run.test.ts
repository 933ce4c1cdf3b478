import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installAreas } from '../../runtime/areas.js'
import { AgentTurns } from '../../runtime/plugins/agent-turns.js'
import { AI } from '../../runtime/ai/index.js'
import { StepCapture } from '../../runtime/interactions/capture.js'
import { type InteractionStep } from '../../runtime/interactions/index.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { agentSocket, deltas, isTerminal, type Frame } from './agent-clients.js'

// An agent whose own run() orchestrates (model, tools, steps) in each tier, over the real agent
// endpoint; the model is the fake OpenAI-compatible server, a tool rule denies one tool.
const dir = mkdtempSync(join(tmpdir(), 'agent-run-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
/** The same orchestrating agent for each tier: isolate (the default), worker and inline. */
const source = (name: string): string =>
  `import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'
let kept
export default definePlugin({
  agents: [agent({
    name: '${name}',
    systemPrompt: 'You orchestrate.',
    tools: [
      tool({ name: 'lookup', description: 'Looks a word up', input: { type: 'object', properties: { q: { type: 'string' } } }, run: (a) => 'found ' + a.q }),
      tool({ name: 'secret_lookup', description: 'Looks up secrets', run: () => 'classified' })
    ],
    async run (turn, ctx) {
      if (turn.message === 'hang') {
        ctx.progress({ step: { name: 'waiting' } })
        await ctx.model({ messages: [{ role: 'user', content: 'hang' }] })
        return 'never'
      }
      if (turn.message === 'stale') {
        if (kept === undefined) { kept = ctx; return 'kept' }
        try { await kept.model({}); return 'accepted' } catch (e) { return 'refused: ' + e.message }
      }
      if (turn.message === 'bad') {
        try { await ctx.model({ tools: ['nope'] }); return 'accepted' } catch (e) { return 'refused: ' + e.message }
      }
      ctx.progress({ step: { name: 'plan', description: 'asking the model', data: { round: 1 } } })
      const first = await ctx.model({ tools: ['lookup'] })
      const call = first.toolCalls[0]
      const found = await ctx.callTool(call.name, call.arguments)
      const denied = await ctx.callTool('secret_lookup', {})
      const second = await ctx.model({ systemPrompt: 'Summarise.', messages: [{ role: 'user', content: 'summarise ' + found.text }] })
      ctx.progress({ text: 'draft; ' })
      return second.text + ' | ' + first.usage.total + ' | ' + denied.ok + ': ' + denied.text
    }
  })]
})
`
const TIERS = { conductor: 'isolate', 'conductor-worker': 'worker', 'conductor-inline': 'inline' } as const
for (const [name, sandbox] of Object.entries(TIERS)) {
  mkdirSync(join(dir, 'plugins', name), { recursive: true })
  writeFileSync(
    join(dir, 'plugins', name, 'plugin.json'),
    JSON.stringify({ name, version: '1.0.0', entry: 'index.js', sandbox })
  )
  writeFileSync(join(dir, 'plugins', name, 'index.js'), source(name))
}
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

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
const tp = await startTestPlatform(
  {
    'platform.plugins.dirs': [join(dir, 'plugins')],
    'platform.plugins.conductor-worker': { sandbox: 'worker' },
    'platform.plugins.conductor-inline': { sandbox: 'inline' },
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': server.url,
    'platform.ai.openai.model': 'test-model',
    'platform.ai.governance.policy-files': [rules]
  },
  { install: installAreas }
)
t.teardown(tp.close)
const turns = tp.platform.plugins.agentTurns
const PATH = '/platform/agent/conductor'

/** The model: a tool call when offered tools, a stream that never ends for 'hang', else `summary of <last>`. */
server.chat = (body: any) => {
  const last = body.messages.at(-1)
  if (Array.isArray(body.tools) && body.tools.length > 0)
    return {
      stream: sseEvents([
        deltaChunk({
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }
          ]
        }),
        deltaChunk({}, 'tool_calls'),
        usageChunk(10, 5)
      ])
    }
  if (last.content === 'hang') return { stream: sseEvents([deltaChunk({ content: 'thinking' })], false), then: 'hang' }
  return {
    stream: sseEvents([deltaChunk({ content: `summary of ${String(last.content)}` }, 'stop'), usageChunk(4, 2)])
  }
}
const say = (message: string): string => JSON.stringify({ message })

for (const [name, sandbox] of Object.entries(TIERS))
  t.test(`${sandbox}: run() calls the model and the tools, reports a step, and answers`, async (t) => {
    const s = await agentSocket(tp.url, `/platform/agent/${name}`)
    t.teardown(() => s.ws.close())
    server.reset()
    const frames = await s.turn(say('look x up'))
    const events = frames.filter((f: Frame) => typeof f.event === 'string' && f.event !== 'text-delta')
    t.match(events, [
      { event: 'agent-step', data: { stepName: 'plan', description: 'asking the model', data: { round: 1 } } },
      { event: 'tool-start', data: { toolName: 'lookup', arguments: { q: 'x' } } },
      { event: 'tool-result', data: { toolName: 'lookup', result: 'found x' } },
      { event: 'tool-start', data: { toolName: 'secret_lookup' } },
      {
        event: 'tool-error',
        data: { toolName: 'secret_lookup', error: /denied by policy tool-rules: secrets stay put/ }
      },
      { event: 'complete' }
    ])
    t.equal(events.length, 6)
    const answer = 'summary of summarise found x | 15 | false: tool call denied by policy tool-rules: secrets stay put'
    t.equal(deltas(frames), 'draft; ' + answer)
    t.match(frames.at(-1), {
      event: 'complete',
      data: { summary: 'draft; ' + answer, usage: { input: 14, output: 7, total: 21 } }
    })
    t.equal(frames.filter(isTerminal).length, 1)
    // the model saw the agent's prompt, the user message and the offered tool; then the run's own prompt
    const [first, second] = server.on('/chat/completions')
    t.match(first.messages, [
      { role: 'system', content: 'You orchestrate.' },
      { role: 'user', content: 'look x up' }
    ])
    t.same(
      first.tools.map((x: any) => x.function.name),
      ['lookup']
    )
    t.same(second.messages, [
      { role: 'system', content: 'Summarise.' },
      { role: 'user', content: 'summarise found x' }
    ])
    t.equal(second.tools, undefined)
    t.equal(turns.size, 0, 'the finished turn left nothing behind')
  })

t.test('bad model() options are the run’s error and call nothing', async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  server.reset()
  const frames = await s.turn(say('bad'))
  t.equal(deltas(frames), "refused: model(): 'nope' is not one of this agent's tools")
  t.equal(server.on('/chat/completions').length, 0)
  t.equal(turns.size, 0)
})

t.test('cancelling the turn aborts the model call in flight and closes the turn', async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  server.reset()
  const abandoned = server.abandoned
  s.ws.send(say('hang'))
  const step = await s.inbox.next((f) => f.event === 'agent-step')
  t.match(step.data, { stepName: 'waiting', description: '', data: null })
  while (server.on('/chat/completions').length === 0) await new Promise((r) => setTimeout(r, 10))
  t.equal(turns.size, 1, 'the running turn is open')
  s.ws.send(JSON.stringify({ type: 'cancel' }))
  const end = await s.inbox.next(isTerminal)
  t.match(end, { type: 'error', data: /cancelled/ })
  while (server.abandoned === abandoned) await new Promise((r) => setTimeout(r, 10))
  t.equal(server.abandoned, abandoned + 1, 'the model request was dropped')
  t.equal(turns.size, 0, 'the cancelled turn left nothing behind')
})

t.test('a caller that stops reading ends the turn: the model call is dropped, the turn closed', async (t) => {
  server.reset()
  const abandoned = server.abandoned
  const events = tp.platform.area(AI).runTurn({ agent: 'conductor', message: 'hang' })[Symbol.asyncIterator]()
  t.match((await events.next()).value, { type: 'agent-step', name: 'waiting' })
  // the host serves the run's calls whether or not the caller reads: wait for the model request
  while (server.on('/chat/completions').length === 0) await new Promise((r) => setTimeout(r, 10))
  t.equal(turns.size, 1)
  await events.return!(undefined)
  while (server.abandoned === abandoned) await new Promise((r) => setTimeout(r, 10))
  t.equal(server.abandoned, abandoned + 1, 'the model request was dropped')
  t.equal(turns.size, 0)
})

t.test("a finished turn's ctx is refused: by the host (inline) or already in the sandbox", async (t) => {
  for (const [name, refusal] of [
    ['conductor-inline', 'refused: agent.model: no open agent turn with this id'],
    ['conductor', 'refused: the call has ended']
  ] as const) {
    const s = await agentSocket(tp.url, `/platform/agent/${name}`)
    t.teardown(() => s.ws.close())
    server.reset()
    t.equal(deltas(await s.turn(say('stale'))), 'kept')
    t.equal(deltas(await s.turn(say('stale'))), refusal, name)
    t.equal(server.on('/chat/completions').length, 0)
  }
  t.equal(turns.size, 0)
})

t.test('a forged or finished turn id, or another plugin, is refused', async (t) => {
  await t.rejects(turns.call('conductor', 'agent.model', ['forged-id', {}]), /no open agent turn/)
  const own = new AgentTurns()
  let called = 0
  const handlers = {
    model: async () => ++called,
    callTool: async () => ++called
  }
  const id = own.begin('alpha', handlers)
  t.equal(id.length, 24, '18 random bytes')
  t.not(own.begin('alpha', handlers), id)
  t.equal(await own.call('alpha', 'agent.model', [id, {}]), 1)
  await t.rejects(own.call('beta', 'agent.model', [id, {}]), /no open agent turn/)
  await t.rejects(own.call('alpha', 'agent.other', [id]), /unknown capability/)
  own.end(id)
  await t.rejects(own.call('alpha', 'agent.callTool', [id, 'x', {}]), /no open agent turn/)
  t.equal(called, 1)
})

t.test('an interaction keeps a run step as an agent-step step: its name as toolName, data.data', async (t) => {
  const steps: InteractionStep[] = []
  const c = new StepCapture({ maxSteps: 10, coalesceMs: 0, emit: (st) => steps.push(st) })
  c.event({ type: 'agent-step', name: 'plan', description: 'asking the model', data: { round: 1 } })
  c.event({ type: 'agent-step', name: 'bare' })
  t.match(steps, [
    { type: 'agent-step', toolName: 'plan', text: 'asking the model', data: { data: { round: 1 } } },
    { type: 'agent-step', toolName: 'bare', text: null, data: {} }
  ])
})
