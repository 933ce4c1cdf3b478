import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { client, startOpenAi } from './helpers.js'

// the agents answered by an OpenAI-compatible model server (the fake), records in the memory store,
// and a governance policy that denies one phrase
const server = await new OpenAiServer().start()
t.teardown(() => server.close())
server.chat = () => ({
  stream: sseEvents([deltaChunk({ content: 'Hello' }), deltaChunk({ content: ' world' }, 'stop'), usageChunk(5, 2)])
})
const dir = mkdtempSync(join(tmpdir(), 'openai-api-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const policies = join(dir, 'policies.yaml')
writeFileSync(
  policies,
  `version: "3"
policies:
  - name: no-launch-codes
    type: deny-list
    config: {phrases: [launch codes]}
`
)
const tp = await startOpenAi({
  'platform.interactions.store': 'memory',
  'platform.ai.runtime': 'openai',
  'platform.ai.openai.base-url': server.url,
  'platform.ai.openai.model': 'test-model',
  'platform.ai.governance.policy-files': [policies]
})
t.teardown(tp.close)
const alice = client(tp)

t.test('the model server answers; instructions and input items reach it in order', async (t) => {
  server.reset()
  const r = await alice.responses.create({
    model: 'demo',
    instructions: 'Answer in one line.',
    input: [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'second' }
    ]
  })
  t.equal(r.status, 'completed')
  t.equal(r.output_text, 'Hello world')
  t.match(r.usage, { input_tokens: 5, output_tokens: 2, total_tokens: 7 })
  const messages = server.on('/chat/completions')[0].messages as { role: string; content: string }[]
  t.equal(messages[0]!.role, 'system')
  t.match(messages[0]!.content, /Answer in one line\./)
  t.same(
    messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['user', 'first'],
      ['assistant', 'noted'],
      ['user', 'second']
    ]
  )
  t.equal((await alice.responses.retrieve(r.id)).output_text, 'Hello world', 'the memory store keeps it')
})

t.test('a policy denial: the response is incomplete, reason content_filter; the model is never asked', async (t) => {
  server.reset()
  const r = await alice.responses.create({ model: 'demo', input: 'tell me the launch codes' })
  t.match(r, { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, error: null, output: [] })
  const events: any[] = []
  for await (const e of await alice.responses.create({ model: 'demo', input: 'launch codes please', stream: true }))
    events.push(e)
  t.same(
    events.map((e) => e.type),
    ['response.created', 'response.in_progress', 'response.incomplete']
  )
  t.equal(server.on('/chat/completions').length, 0)
})

t.test('the streamed deltas are the model server’s text', async (t) => {
  const events: any[] = []
  for await (const e of await alice.responses.create({ model: 'demo', input: 'hi', stream: true })) events.push(e)
  t.equal(events.at(-1).type, 'response.completed')
  t.equal(
    events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join(''),
    'Hello world'
  )
})

t.test('an input_image reaches the model server as an image_url part of the user message', async (t) => {
  server.reset()
  const url = 'data:image/png;base64,iVBORw0KGgo='
  const r = await alice.responses.create({
    model: 'demo',
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'what is in this image?' },
          { type: 'input_image', image_url: url, detail: 'auto' }
        ]
      }
    ]
  })
  t.equal(r.status, 'completed')
  const sent = server.on('/chat/completions')[0].messages.at(-1)
  t.same(sent, {
    role: 'user',
    content: [
      { type: 'text', text: 'what is in this image?' },
      { type: 'image_url', image_url: { url } }
    ]
  })
})

t.test(
  'max_output_tokens goes to the model server; its finish_reason length makes the response incomplete',
  async (t) => {
    server.reset()
    const chat = server.chat
    t.teardown(() => (server.chat = chat))
    server.chat = () => ({
      stream: sseEvents([deltaChunk({ content: 'Hello' }, 'length'), usageChunk(5, 1)])
    })
    const r = await alice.responses.create({ model: 'demo', input: 'hi', max_output_tokens: 1 })
    t.equal(server.on('/chat/completions')[0].max_tokens, 1)
    t.match(r, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Hello' })
  }
)

t.test(
  'client function tools: offered to the model server, its tool call ends the response, the output continues it',
  async (t) => {
    server.reset()
    const chat = server.chat
    t.teardown(() => (server.chat = chat))
    server.chat = (body) =>
      body.messages.at(-1).role === 'tool'
        ? {
            stream: sseEvents([
              deltaChunk({ content: `It is ${body.messages.at(-1).content}.` }, 'stop'),
              usageChunk(9, 3)
            ])
          }
        : {
            stream: sseEvents([
              deltaChunk({
                tool_calls: [{ index: 0, id: 'call_w1', function: { name: 'get_weather', arguments: '{"city":' } }]
              }),
              deltaChunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, 'tool_calls'),
              usageChunk(7, 4)
            ])
          }
    const tools = [
      {
        type: 'function' as const,
        name: 'get_weather',
        description: 'The weather of a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: false
      }
    ]
    const r = await alice.responses.create({ model: 'demo', input: 'weather in Oslo?', tools })
    t.ok(
      server.on('/chat/completions')[0].tools.some((x: any) => x.function.name === 'get_weather'),
      "offered beside the agent's own tools"
    )
    t.match(r.output, [
      { type: 'function_call', call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' }
    ])
    const next = await alice.responses.create({
      model: 'demo',
      previous_response_id: r.id,
      input: [{ type: 'function_call_output', call_id: 'call_w1', output: 'snowing' }],
      tools
    })
    t.equal(next.output_text, 'It is snowing.')
    const sent = server.on('/chat/completions')[1].messages
    t.match(sent.slice(-3), [
      { role: 'user', content: 'weather in Oslo?' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_w1', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]
      },
      { role: 'tool', tool_call_id: 'call_w1', content: 'snowing' }
    ])
    t.equal(
      sent.filter((m: any) => m.role === 'user').length,
      1,
      'the user message once: the call turn is not remembered twice'
    )
  }
)
