// AG-UI steps (an agent's run() reporting steps) and frontend tools (RunAgentInput.tools offered to
// the model; a call ends the run; the client's result in the next run reaches the model), over
// real sockets, each stream read by the official client's pipeline and its verifier.
import t from 'tap'
import { rmSync } from 'node:fs'
import { from, lastValueFrom, toArray } from 'rxjs'
import {
  HttpAgent,
  enforceEvents,
  runHttpRequest,
  transformHttpEventStream,
  verifyEvents,
  type BaseEvent
} from '@ag-ui/client'
import { EventSchema } from '@ag-ui/core/schemas'
import { AI, type TurnEvent } from '../../runtime/ai/index.js'
import { AguiRun, type AguiEvent } from '../../runtime/ai/agui-events.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { tempRoot, writePlugin } from '../plugins/helpers.js'

type Ev = BaseEvent & Record<string, any>

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body)
  })

async function run(url: string, body: unknown): Promise<Ev[]> {
  const events = await lastValueFrom(
    transformHttpEventStream(runHttpRequest(() => post(url, body))).pipe(enforceEvents(), verifyEvents(), toArray())
  )
  for (const e of events) EventSchema.parse(e)
  return events as Ev[]
}
const types = (events: Ev[]) => events.map((e) => e.type)

const root = tempRoot('agui-steps-')
writePlugin(root, 'stepper', {
  index: `import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [
  agent({
    name: 'stepper',
    async run (turn, ctx) {
      ctx.progress({ step: { name: 'plan', description: 'making a plan' } })
      ctx.progress({ text: 'Planned. ' })
      ctx.progress({ step: { name: 'act', data: { n: 1 } } })
      return 'Acted.'
    }
  }),
  agent({
    name: 'booker',
    systemPrompt: 'You book.',
    tools: [tool({ name: 'lookup', description: 'Looks up a slot', run: (a) => 'slot ' + a.day })]
  })
] })
`
})

t.teardown(() => rmSync(root, { recursive: true, force: true }))

t.test('agent steps become STEP_STARTED / STEP_FINISHED', async (t) => {
  const tp = await startTestPlatform({ 'platform.plugins.dirs': [root] }, { install: installAreas })
  t.teardown(tp.close)
  const events = await run(`${tp.url}/platform/agent/stepper/agui`, {
    threadId: 'th-steps',
    runId: 'run-steps',
    messages: [{ id: 'u1', role: 'user', content: 'go' }]
  })
  t.same(types(events), [
    'RUN_STARTED',
    'STEP_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'STEP_FINISHED',
    'STEP_STARTED',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'STEP_FINISHED',
    'STATE_SNAPSHOT',
    'RUN_FINISHED'
  ])
  const steps = events.filter((e) => e.type.startsWith('STEP_'))
  t.match(steps, [
    { type: 'STEP_STARTED', stepName: 'plan', metadata: { description: 'making a plan' } },
    { type: 'STEP_FINISHED', stepName: 'plan' },
    { type: 'STEP_STARTED', stepName: 'act', metadata: { data: { n: 1 } } },
    { type: 'STEP_FINISHED', stepName: 'act' }
  ])
  t.equal(
    events
      .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => e.delta)
      .join(''),
    'Planned. Acted.'
  )
})

t.test('event mapping: an open step is finished before RUN_ERROR and on a repeated name', async (t) => {
  const out: AguiEvent[] = []
  const mapped = new AguiRun('th', 'rn', undefined, (e) => out.push(e))
  const turn: TurnEvent[] = [
    { type: 'agent-step', name: 'fetch' },
    { type: 'agent-step', name: 'fetch' },
    { type: 'text', delta: 'partial' },
    { type: 'error', code: 'runtime', message: 'model exploded' }
  ]
  mapped.start()
  for (const e of turn) mapped.event(e)
  const verified = (await lastValueFrom(from(out as BaseEvent[]).pipe(verifyEvents(), toArray()))) as Ev[]
  for (const e of verified) EventSchema.parse(e)
  t.same(types(verified), [
    'RUN_STARTED',
    'STEP_STARTED',
    'STEP_FINISHED',
    'STEP_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'STEP_FINISHED',
    'RUN_ERROR'
  ])
})

t.test('frontend tools: offered to the model, a call ends the run, the result reaches the model', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  const tp = await startTestPlatform(
    {
      'platform.plugins.dirs': [root],
      'platform.ai.runtime': 'openai',
      'platform.ai.openai.base-url': fake.url,
      'platform.ai.openai.model': 'test-model',
      'platform.ai.openai.idle-timeout-ms': 10_000
    },
    { install: installAreas }
  )
  t.teardown(tp.close)
  const url = `${tp.url}/platform/agent/booker/agui`
  const confirm = {
    name: 'confirm_booking',
    description: 'Asks the user to confirm a booking',
    parameters: { type: 'object', properties: { slot: { type: 'string' } }, required: ['slot'] }
  }
  const call = (index: number, id: string, name: string, args: string) => ({
    index,
    id,
    type: 'function',
    function: { name, arguments: args }
  })
  // one round asks for the agent's tool and the client's; after the client's result: the answer
  fake.chat = (body: { messages: { role: string; content: string; tool_call_id?: string }[] }) => {
    if (body.messages.some((m) => m.role === 'tool' && m.tool_call_id === 'call_confirm'))
      return { stream: sseEvents([deltaChunk({ content: 'Booked.' }, 'stop'), usageChunk(20, 2)]) }
    return {
      stream: sseEvents([
        deltaChunk({
          tool_calls: [
            call(0, 'call_lookup', 'lookup', '{"day":"monday"}'),
            call(1, 'call_confirm', 'confirm_booking', '{"slot":"monday 9"}')
          ]
        }),
        deltaChunk({}, 'tool_calls')
      ])
    }
  }
  const first = {
    threadId: 'th-tools',
    runId: 'run-1',
    messages: [{ id: 'u1', role: 'user', content: 'Book me monday' }],
    tools: [confirm, { name: 'lookup', description: 'a client tool that clashes with the agent tool' }]
  }
  const events = await run(url, first)
  t.same(types(events), [
    'RUN_STARTED',
    'TOOL_CALL_START',
    'TOOL_CALL_ARGS',
    'TOOL_CALL_END',
    'TOOL_CALL_RESULT',
    'TOOL_CALL_START',
    'TOOL_CALL_ARGS',
    'TOOL_CALL_END',
    'STATE_SNAPSHOT',
    'RUN_FINISHED'
  ])
  t.match(events[4], { toolCallId: 'call_lookup', content: 'slot monday' }, 'the agent tool ran on the server')
  t.match(events[5], { toolCallId: 'call_confirm', toolCallName: 'confirm_booking' })
  t.same(JSON.parse(events[6]!.delta), { slot: 'monday 9' })
  const offered = (fake.on('/chat/completions')[0].tools as { function: { name: string; parameters: unknown } }[]).map(
    (x) => x.function
  )
  t.same(
    offered.map((f) => f.name),
    ['lookup', 'confirm_booking'],
    "the client's tool is offered beside the agent's, which keeps its name"
  )
  t.same(offered[1]!.parameters, confirm.parameters, 'with its JSON schema')
  t.equal(events[5]!.parentMessageId, events[1]!.parentMessageId, "both calls belong to the round's message")
  t.equal(fake.on('/chat/completions').length, 1, 'the model was not asked again: the client runs its tool')

  // the client ran the tool: the next run carries its result after the assistant's calls
  const parent = events[1]!.parentMessageId as string
  const second = {
    threadId: 'th-tools',
    runId: 'run-2',
    tools: [confirm],
    messages: [
      ...first.messages,
      {
        id: parent,
        role: 'assistant',
        toolCalls: [
          { id: 'call_lookup', type: 'function', function: { name: 'lookup', arguments: '{"day":"monday"}' } },
          {
            id: 'call_confirm',
            type: 'function',
            function: { name: 'confirm_booking', arguments: '{"slot":"monday 9"}' }
          }
        ]
      },
      { id: 't1', role: 'tool', toolCallId: 'call_lookup', content: 'slot monday' },
      { id: 't2', role: 'tool', toolCallId: 'call_confirm', content: 'confirmed by the user' }
    ]
  }
  const answer = await run(url, second)
  t.same(types(answer).slice(-5), [
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'STATE_SNAPSHOT',
    'RUN_FINISHED'
  ])
  const sent = fake.on('/chat/completions')[1].messages as {
    role: string
    content: string
    tool_call_id?: string
    tool_calls?: { id: string }[]
  }[]
  t.same(
    sent
      .filter((m) => m.role !== 'system')
      .map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.map((c) => c.id).join(',') ?? m.content]),
    [
      ['user', 'Book me monday'],
      ['assistant', 'call_lookup,call_confirm'],
      ['tool', 'call_lookup'],
      ['tool', 'call_confirm']
    ],
    "the model answers from the client's result, with no new user message"
  )
  t.equal(sent.at(-1)!.content, 'confirmed by the user')

  t.test('the official HttpAgent: pending tool call, then the result run', async (t) => {
    const agent = new HttpAgent({ url, threadId: 'th-agent' })
    agent.addMessage({ id: 'ua', role: 'user', content: 'Book me monday' })
    const r1 = await agent.runAgent({ tools: [confirm] })
    const asked = agent.messages.find((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0)
    const pending = asked?.role === 'assistant' ? asked.toolCalls!.map((c) => c.function.name) : []
    t.same(pending, ['lookup', 'confirm_booking'], 'the assistant message carries both calls')
    t.ok(
      r1.newMessages.some((m) => m.role === 'tool' && m.toolCallId === 'call_lookup'),
      'the server result is kept'
    )
    agent.addMessage({ id: 'ta', role: 'tool', toolCallId: 'call_confirm', content: 'confirmed by the user' })
    await agent.runAgent({ tools: [confirm] })
    const last = agent.messages.at(-1)!
    t.match(last, { role: 'assistant', content: 'Booked.' })
  })

  t.test('bad continuations are refused before any turn', async (t) => {
    const ai = tp.platform.area(AI)
    const cases: [unknown, RegExp][] = [
      [
        { ...second, messages: [first.messages[0], { id: 'x', role: 'tool', toolCallId: 'nobody', content: 'r' }] },
        /answers tool call 'nobody', which no assistant message before it made/
      ],
      [{ ...second, messages: [{ id: 'x', role: 'tool', toolCallId: 'c', content: 'r' }] }, /no user message/],
      [{ ...first, tools: [confirm, confirm] }, /a second tool named 'confirm_booking'/],
      [{ ...first, tools: [{ name: '', description: 'x' }] }, /tools\.0\.name/]
    ]
    for (const [body, detail] of cases) {
      const res = await post(url, body)
      t.equal(res.status, 400)
      t.match(await res.json(), { code: 'PLT_ERR_INVALID_AGUI_INPUT', error: detail })
    }
    t.equal(ai.inFlight(), 0)
  })
})
