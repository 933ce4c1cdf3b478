import t, { type Test } from 'tap'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { client, startOpenAi } from './helpers.js'
import { validEvent, validResponse, why } from './open-responses-schema.js'

// The Open Responses compliance cases, run with the official client against the demo agent
// answered by an OpenAI-compatible model server (the fake): it calls the client's tool when
// offered one, else answers in two deltas. Every response and every event is schema-checked.
const server = await new OpenAiServer().start()
t.teardown(() => server.close())
server.chat = (body) => {
  const wantsTool = (body.tools ?? []).some((x: any) => x.function.name === 'get_weather')
  const answered = body.messages.at(-1).role === 'tool'
  return {
    stream: sseEvents(
      wantsTool && !answered
        ? [
            deltaChunk({
              tool_calls: [
                { index: 0, id: 'call_1', function: { name: 'get_weather', arguments: '{"location":"San Francisco"}' } }
              ]
            }),
            deltaChunk({}, 'tool_calls'),
            usageChunk(12, 6)
          ]
        : [deltaChunk({ content: 'Hello' }), deltaChunk({ content: ' there' }, 'stop'), usageChunk(8, 2)]
    )
  }
}
const tp = await startOpenAi({
  'platform.ai.runtime': 'openai',
  'platform.ai.openai.base-url': server.url,
  'platform.ai.openai.model': 'test-model'
})
t.teardown(tp.close)
const alice = client(tp)

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'The city' } },
    required: ['location']
  },
  strict: false
}

function checked(t: Test, r: unknown): any {
  t.ok(validResponse(r), `the response is valid: ${why(validResponse)}`)
  return r
}

async function streamed(t: Test, s: AsyncIterable<unknown>): Promise<any[]> {
  const events: any[] = []
  for await (const e of s) {
    t.ok(validEvent(e), `${(e as any).type} is valid: ${why(validEvent)}`)
    events.push(e)
  }
  t.same(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
    'sequence numbers from 0, by one'
  )
  return events
}

t.test('basic text response', async (t) => {
  const r = checked(t, await alice.responses.create({ model: 'demo', input: 'Say hello in exactly 3 words.' }))
  t.equal(r.status, 'completed')
  t.match(r.output, [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there' }] }])
})

t.test('streaming response: valid events, status completed', async (t) => {
  const events = await streamed(
    t,
    await alice.responses.create({ model: 'demo', input: 'Count from 1 to 5.', stream: true })
  )
  t.equal(events[0].type, 'response.created')
  t.equal(events.at(-1).type, 'response.completed')
  t.equal(events.at(-1).response.status, 'completed')
  t.ok(events.some((e) => e.type === 'response.output_text.delta'))
})

t.test('system prompt: a system message item', async (t) => {
  server.reset()
  const r = checked(
    t,
    await alice.responses.create({
      model: 'demo',
      input: [
        { type: 'message', role: 'system', content: 'You are a pirate. Always respond in pirate speak.' },
        { type: 'message', role: 'user', content: 'Say hello.' }
      ]
    })
  )
  t.equal(r.status, 'completed')
  t.match(server.on('/chat/completions')[0].messages[0], { role: 'system', content: /pirate/ })
})

t.test('tool calling: the output has a function_call item', async (t) => {
  const r = checked(
    t,
    await alice.responses.create({
      model: 'demo',
      input: "What's the weather like in San Francisco?",
      tools: [weather]
    })
  )
  t.match(r.output, [{ type: 'function_call', name: 'get_weather', call_id: 'call_1' }])
  const next = checked(
    t,
    await alice.responses.create({
      model: 'demo',
      previous_response_id: r.id,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: '{"temperature": 18}' }],
      tools: [weather]
    })
  )
  t.equal(next.status, 'completed')
  t.equal(next.output_text, 'Hello there')
})

t.test('tool calling streamed: item added, arguments delta and done, item done', async (t) => {
  const events = await streamed(
    t,
    await alice.responses.create({
      model: 'demo',
      input: "What's the weather like in San Francisco?",
      tools: [weather],
      stream: true
    })
  )
  const types = events.map((e) => e.type)
  for (const type of [
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done'
  ])
    t.ok(types.includes(type), type)
  t.match(events.find((e) => e.type === 'response.output_item.added').item, { type: 'function_call' })
  t.equal(events.at(-1).type, 'response.completed')
})

t.test('image input: an input_image with a data URL', async (t) => {
  server.reset()
  const pixel =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='
  const r = checked(
    t,
    await alice.responses.create({
      model: 'demo',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What color is this pixel?' },
            { type: 'input_image', image_url: pixel, detail: 'auto' }
          ]
        }
      ]
    })
  )
  t.equal(r.status, 'completed')
  t.match(server.on('/chat/completions')[0].messages.at(-1).content, [{ type: 'text' }, { type: 'image_url' }])
})

t.test('multi-turn: user, assistant, user items', async (t) => {
  const r = checked(
    t,
    await alice.responses.create({
      model: 'demo',
      input: [
        { type: 'message', role: 'user', content: 'My name is Alice.' },
        { type: 'message', role: 'assistant', content: 'Hello Alice! Nice to meet you.' },
        { type: 'message', role: 'user', content: 'What is my name?' }
      ]
    })
  )
  t.equal(r.status, 'completed')
  // and the retrieved record is valid too
  checked(t, await alice.responses.retrieve(r.id))
})
