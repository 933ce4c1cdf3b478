import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { client, failure, startOpenAi } from './helpers.js'

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

t.test('text.format json_schema and json_object reach the model server as response_format', async (t) => {
  const format = {
    type: 'json_schema' as const,
    name: 'weather',
    description: 'A city and its sky',
    schema: {
      type: 'object',
      properties: { city: { type: 'string' }, sky: { type: 'string' } },
      required: ['city', 'sky'],
      additionalProperties: false
    },
    strict: true
  }
  server.reset()
  const r = await alice.responses.create({ model: 'demo', input: 'weather in Oslo as JSON', text: { format } })
  t.equal(r.status, 'completed')
  t.same(server.on('/chat/completions')[0].response_format, {
    type: 'json_schema',
    json_schema: { name: 'weather', description: 'A city and its sky', schema: format.schema, strict: true }
  })
  t.same(r.text?.format, format, 'the response says the format it was asked for')
  t.same((await alice.responses.retrieve(r.id)).text?.format, format, 'the record keeps it')
  const events: any[] = []
  for await (const e of await alice.responses.create({ model: 'demo', input: 'hi', text: { format }, stream: true }))
    events.push(e)
  t.same(events[0].response.text.format, format, 'response.created carries it')

  server.reset()
  const o = await alice.responses.create({
    model: 'demo',
    input: 'any JSON',
    text: { format: { type: 'json_object' } }
  })
  t.equal(o.status, 'completed')
  t.same(server.on('/chat/completions')[0].response_format, { type: 'json_object' })

  server.reset()
  const c = await alice.chat.completions.create({
    model: 'demo',
    messages: [{ role: 'user', content: 'weather in Oslo as JSON' }],
    response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: format.schema, strict: true } }
  })
  t.equal(c.choices[0]!.finish_reason, 'stop')
  t.same(server.on('/chat/completions')[0].response_format, {
    type: 'json_schema',
    json_schema: { name: 'weather', schema: format.schema, strict: true }
  })

  server.reset()
  const plain = await alice.responses.create({ model: 'demo', input: 'hi', text: { format: { type: 'text' } } })
  t.equal(plain.status, 'completed')
  t.notOk('response_format' in server.on('/chat/completions')[0], 'plain text sends no response_format')
})

t.test('a malformed schema is a 400 naming it; the model server is never asked', async (t) => {
  server.reset()
  const bad = { type: 'object', properties: { city: { type: 'town' } } }
  t.match(
    await failure(
      alice.responses.create({
        model: 'demo',
        input: 'hi',
        text: { format: { type: 'json_schema', name: 'w', schema: bad } }
      })
    ),
    { name: 'BadRequestError', status: 400, param: 'text.format.schema', code: 'PLT_ERR_OPENAI_INVALID_REQUEST' }
  )
  t.match(
    await failure(
      alice.responses.create({
        model: 'demo',
        input: 'hi',
        text: {
          format: { type: 'json_schema', name: 'w', schema: { $schema: 'https://example.com/mine', type: 'object' } }
        }
      })
    ),
    { status: 400, param: 'text.format.schema' },
    'a meta-schema the server does not know'
  )
  t.match(
    await failure(
      alice.chat.completions.create({
        model: 'demo',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'w', schema: bad } }
      })
    ),
    { status: 400, param: 'response_format.json_schema.schema' }
  )
  const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: {} }
  const ok = await alice.responses.create({
    model: 'demo',
    input: 'hi',
    text: { format: { type: 'json_schema', name: 'w', schema: draft7 } }
  })
  t.equal(ok.status, 'completed', 'a draft-07 schema is a schema too')
  t.equal(server.on('/chat/completions').length, 1, 'only the valid request reached the model server')
})
