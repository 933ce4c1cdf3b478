import t from 'tap'
import { ALICE, client, failure, startOpenAi } from './helpers.js'

// the demo agent on the demo runtime: deterministic text, and a client tool called when named
const tp = await startOpenAi()
t.teardown(tp.close)
const alice = client(tp)

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
      required: ['city']
    }
  }
}

t.test('a completion: the message, stop, usage; the same record is an interaction', async (t) => {
  const c = await alice.chat.completions.create({
    model: 'demo',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello' }
    ]
  })
  t.match(c, {
    id: /^int-/,
    object: 'chat.completion',
    model: 'demo',
    created: Number,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: /You said: "hello"/ } }],
    usage: { prompt_tokens: Number, completion_tokens: Number, total_tokens: Number }
  })
  const rest = await fetch(`${tp.url}/api/interactions/${c.id}`, { headers: { authorization: `Bearer ${ALICE}` } })
  const record = await rest.json()
  t.equal(record.finalText, c.choices[0]!.message.content)
  // the demo runtime no longer reads a prompt back: the turn's recorded input shows the system message went in
  t.match(JSON.stringify(record), /Be brief\./, 'the system message reached the turn')
  t.equal((await alice.responses.retrieve(c.id)).output_text, c.choices[0]!.message.content, 'and a response')
})

t.test('streamed: a role chunk, content chunks, the finish chunk, the usage chunk, then [DONE]', async (t) => {
  const stream = await alice.chat.completions.create({
    model: 'demo',
    messages: [{ role: 'user', content: 'hello stream' }],
    stream: true,
    stream_options: { include_usage: true }
  })
  const chunks: any[] = []
  for await (const c of stream) chunks.push(c)
  t.match(chunks[0], { object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant' } }] })
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')
  t.match(text, /You said: "hello stream"/)
  t.match(chunks.at(-2), { choices: [{ finish_reason: 'stop', delta: {} }], usage: null })
  t.match(chunks.at(-1), { choices: [], usage: { completion_tokens: Number, total_tokens: Number } })
  t.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id for every chunk')
  // without include_usage: no usage chunk; the raw stream ends with [DONE]
  const res = await fetch(`${tp.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }], stream: true })
  })
  const lines = (await res.text()).split('\n').filter((l) => l.startsWith('data: '))
  t.equal(lines.at(-1), 'data: [DONE]')
  t.match(JSON.parse(lines.at(-2)!.slice(6)), { choices: [{ finish_reason: 'stop' }] })
  t.notOk(lines.slice(0, -1).some((l) => 'usage' in JSON.parse(l.slice(6))))
})

t.test('function tools: tool_calls end the completion; the tool message continues it', async (t) => {
  const first = await alice.chat.completions.create({
    model: 'demo',
    messages: [{ role: 'user', content: 'what is the weather in paris' }],
    tools: [weather]
  })
  const choice = first.choices[0]!
  t.equal(choice.finish_reason, 'tool_calls')
  t.equal(choice.message.content, null)
  const call = choice.message.tool_calls![0]! as any
  t.match(call, { type: 'function', function: { name: 'get_weather' } })
  t.same(JSON.parse(call.function.arguments), { city: 'Paris' })
  const second = await alice.chat.completions.create({
    model: 'demo',
    messages: [
      { role: 'user', content: 'what is the weather in paris' },
      choice.message,
      { role: 'tool', tool_call_id: call.id, content: 'sunny' }
    ],
    tools: [weather]
  })
  t.match(second.choices[0], { finish_reason: 'stop', message: { content: 'According to get_weather: sunny' } })
  // streamed, the call comes as a tool_calls delta
  const chunks: any[] = []
  for await (const c of await alice.chat.completions.create({
    model: 'demo',
    messages: [{ role: 'user', content: 'what is the weather in rome' }],
    tools: [weather],
    stream: true
  }))
    chunks.push(c)
  t.match(
    chunks.find((c) => c.choices[0]?.delta.tool_calls !== undefined),
    { choices: [{ delta: { tool_calls: [{ index: 0, type: 'function', function: { name: 'get_weather' } }] } }] }
  )
  t.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls')
})

t.test('max_tokens stops the answer: finish_reason length', async (t) => {
  const c = await alice.chat.completions.create({
    model: 'demo',
    messages: [{ role: 'user', content: 'a b c d e f' }],
    max_tokens: 2
  })
  t.equal(c.choices[0]!.finish_reason, 'length')
  t.equal(c.choices[0]!.message.content!.trim().split(/\s+/).length, 2)
})

t.test('400s: n other than 1, bad messages, unknown model is a 404', async (t) => {
  const rows: [unknown, string, string][] = [
    [{ model: 'demo', messages: [{ role: 'user', content: 'hi' }], n: 2 }, 'n', 'PLT_ERR_OPENAI_UNSUPPORTED'],
    [{ model: 'demo', messages: [] }, 'messages', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [
      { model: 'demo', messages: [{ role: 'robot', content: 'hi' }] },
      'messages[0].role',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      {
        model: 'demo',
        messages: [
          { role: 'system', content: 'x' },
          { role: 'assistant', content: 'y' }
        ]
      },
      'messages',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', messages: [{ role: 'user', content: [{ type: 'input_audio' }] }] },
      'messages[0].content[0].type',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ],
    [
      { model: 'demo', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: 'yes' } },
      'stream_options',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } },
      'response_format',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ],
    [
      {
        model: 'demo',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'nope' } } }
      },
      'response_format.json_schema.schema',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'custom' }] },
      'tools[0]',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ]
  ]
  for (const [body, param, code] of rows)
    t.match(
      await failure(alice.chat.completions.create(body as never)),
      { name: 'BadRequestError', status: 400, param, code },
      JSON.stringify(body)
    )
  t.match(
    await failure(alice.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })),
    { status: 404, code: 'PLT_ERR_OPENAI_UNKNOWN_MODEL' }
  )
})
