import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { client, startOpenAi } from './helpers.js'

// the demo runtime calls a client tool when the message names it (deterministically); a policy
// denies one client tool, so the tool gate is seen to apply to client tools too
const dir = mkdtempSync(join(tmpdir(), 'openai-tools-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const policies = join(dir, 'policies.yaml')
writeFileSync(
  policies,
  `version: "3"
policies:
  - name: no-launch
    type: deny-list
    config: {phrases: [launch_missiles]}
`
)
const tp = await startOpenAi({ 'platform.ai.governance.policy-files': [policies] })
t.teardown(tp.close)
const alice = client(tp)

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather of a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
    required: ['city']
  },
  strict: false
}

t.test('a client function tool: the response ends with its call; the output continues it', async (t) => {
  const r = await alice.responses.create({ model: 'demo', input: 'what is the weather in paris', tools: [weather] })
  t.equal(r.status, 'completed')
  t.equal(r.output.length, 1)
  const call = r.output[0] as any
  t.match(call, { type: 'function_call', name: 'get_weather', status: 'completed', call_id: /\S/ })
  t.same(JSON.parse(call.arguments), { city: 'Paris' })
  t.match(r.tools, [{ type: 'function', name: 'get_weather' }], 'the tools are echoed')
  const next = await alice.responses.create({
    model: 'demo',
    previous_response_id: r.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 24 C' }],
    tools: [weather]
  })
  t.equal(next.status, 'completed')
  t.equal(next.output_text, 'According to get_weather: sunny, 24 C')
  const items = await alice.responses.inputItems.list(next.id)
  t.match(items.data, [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 24 C' }])
  // an output for no pending call, or none at all for the call, is refused
  for (const input of [
    [{ type: 'function_call_output' as const, call_id: 'call_other', output: 'x' }],
    [{ type: 'function_call_output' as const, call_id: call.call_id, output: 'x' }]
  ]) {
    const res = await fetch(`${tp.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer alice-token-0123456789`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', previous_response_id: input[0]!.call_id === 'x' ? r.id : next.id, input })
    })
    t.equal(res.status, 400)
    t.equal((await res.json()).error.param, 'input')
  }
  const stateless = await alice.responses.create({
    model: 'demo',
    input: [
      { role: 'user', content: 'what is the weather in rome' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'rain' }
    ],
    tools: [weather]
  })
  t.equal(stateless.output_text, 'According to get_weather: rain', 'the whole exchange in the input works too')
})

t.test('tool_choice none offers no tool; a call the tool gate denies never reaches the client', async (t) => {
  const none = await alice.responses.create({
    model: 'demo',
    input: 'what is the weather in paris',
    tools: [weather],
    tool_choice: 'none'
  })
  t.equal(none.output[0]?.type, 'message')
  t.equal(none.tool_choice, 'none')
  const denied = await alice.responses.create({
    model: 'demo',
    input: 'launch the missiles now',
    tools: [
      { type: 'function', name: 'launch_missiles', description: 'Launch missiles', parameters: {}, strict: false }
    ]
  })
  t.notOk(
    denied.output.some((o) => o.type === 'function_call'),
    'no function_call item'
  )
  const rest = await fetch(`${tp.url}/api/interactions/${denied.id}`, {
    headers: { authorization: 'Bearer alice-token-0123456789' }
  })
  const steps = (await rest.json()).steps as any[]
  t.match(
    steps.find((s) => s.type === 'tool-error'),
    { toolName: 'launch_missiles', text: /denied by policy no-launch/ },
    'the model was told the call was denied'
  )
})

t.test('streamed: the function call item, its argument events, then completed', async (t) => {
  const events: any[] = []
  for await (const e of await alice.responses.create({
    model: 'demo',
    input: 'what is the weather in rome',
    tools: [weather],
    stream: true
  }))
    events.push(e)
  t.same(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed'
    ]
  )
  t.match(events[2].item, { type: 'function_call', name: 'get_weather', arguments: '', status: 'in_progress' })
  t.same(JSON.parse(events[4].arguments), { city: 'Rome' })
  t.equal(events[3].delta, events[4].arguments)
  t.equal(events[5].item.id, events[3].item_id)
  t.match(events.at(-1).response.output, [{ type: 'function_call', name: 'get_weather' }])
})
