import t from 'tap'
import type { Test } from 'tap'
import { OpenAiRuntime } from '../../runtime/ai/openai-runtime.js'
import { type AiEvent } from '../../runtime/ai/index.js'
import { type AiMessage, type AiToolSpec } from '../../runtime/ai/runtime.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk, type Reply } from '../helpers/openai-server.js'
import { collect, runRuntimeContract } from './runtime-contract.js'

const TOOLS: AiToolSpec[] = [
  {
    name: 'get_weather',
    description: 'Weather in a city',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
  },
  {
    name: 'get_time',
    description: 'Time in a city',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } } }
  }
]

const TEXT = sseEvents([
  deltaChunk({ role: 'assistant', content: '' }),
  deltaChunk({ content: 'Hello' }),
  deltaChunk({ content: ' world' }),
  deltaChunk({}, 'stop'),
  usageChunk(12, 2, 4)
])
// two parallel tool calls, names and arguments split across chunks as real servers do
const TOOL_CALLS = sseEvents([
  deltaChunk({
    role: 'assistant',
    content: null,
    tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }]
  }),
  deltaChunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
  deltaChunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_', arguments: '' } }] }),
  deltaChunk({ tool_calls: [{ index: 1, function: { name: 'time', arguments: '{"city":"Oslo"}' } }] }),
  deltaChunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
  deltaChunk({}, 'tool_calls'),
  usageChunk(40, 18)
])
const LONG: Reply = {
  stream: sseEvents([deltaChunk({ content: 'one' }), deltaChunk({ content: ' two' })], false),
  then: 'hang'
}

async function fake(t: Test, script: (body: any) => Reply): Promise<OpenAiServer> {
  const s = await new OpenAiServer().start()
  s.chat = script
  t.teardown(() => s.close())
  return s
}

function runtime(url: string, extra: Partial<ConstructorParameters<typeof OpenAiRuntime>[0]> = {}): OpenAiRuntime {
  return new OpenAiRuntime({
    baseUrl: url,
    model: 'test-model',
    apiKey: 'sk-test',
    timeoutMs: 2000,
    idleTimeoutMs: 2000,
    maxConcurrency: 4,
    ...extra
  })
}

const last = (events: AiEvent[]): AiEvent => events[events.length - 1]!

runRuntimeContract(t, 'openai', async (t) => {
  const s = await fake(t, (body) =>
    body.tools !== undefined
      ? { stream: TOOL_CALLS }
      : String(body.messages.at(-1).content).startsWith('long')
        ? LONG
        : { stream: TEXT }
  )
  return {
    runtime: runtime(s.url),
    text: { systemPrompt: 'Be brief.', message: 'hi' },
    tool: { message: 'weather in Paris and time in Oslo', tools: TOOLS },
    long: { message: 'long please' },
    toolNames: TOOLS.map((x) => x.name)
  }
})

t.test('openai: request body, text deltas in order, usage with cached input', async (t) => {
  const s = await fake(t, () => ({ stream: TEXT }))
  const events = await collect(
    runtime(s.url).stream({
      systemPrompt: 'Be brief.',
      message: 'hi',
      history: [
        { role: 'user', content: 'earlier' },
        { role: 'assistant', content: 'ok' }
      ]
    })
  )
  t.same(events, [
    { type: 'text', delta: 'Hello' },
    { type: 'text', delta: ' world' },
    { type: 'usage', usage: { input: 12, output: 2, cachedInput: 4, total: 14, model: 'test-model' } },
    { type: 'done', finishReason: 'stop' }
  ])
  const [body] = s.on('/chat/completions')
  t.match(body, { model: 'test-model', stream: true, stream_options: { include_usage: true } })
  t.same(
    body.messages.map((m: any) => m.role),
    ['system', 'user', 'assistant', 'user']
  )
  t.equal(s.calls[0]!.auth, 'Bearer sk-test')
})

t.test('openai: two parallel tool calls assembled across chunks, tools sent as functions', async (t) => {
  const s = await fake(t, () => ({ stream: TOOL_CALLS }))
  const events = await collect(runtime(s.url).stream({ message: 'x', tools: TOOLS }))
  t.same(
    events.filter((e) => e.type === 'tool-call'),
    [
      { type: 'tool-call', call: { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris' } } },
      { type: 'tool-call', call: { id: 'call_b', name: 'get_time', arguments: { city: 'Oslo' } } }
    ]
  )
  t.match(last(events), { type: 'done', finishReason: 'tool-calls' })
  t.match(s.on('/chat/completions')[0].tools[0], {
    type: 'function',
    function: { name: 'get_weather', parameters: { required: ['city'] } }
  })
})

t.test('openai: names OpenAI refuses travel under unique stand-ins, and calls come back to their tool', async (t) => {
  const long = 'x'.repeat(70)
  // `fs_read` is a name OpenAI accepts: it keeps it, and `fs.read` and `fs:read` may not take it
  const names = ['fs.read', 'fs_read', 'fs:read', long, 'get_time']
  const tools: AiToolSpec[] = names.map((name) => ({ name, description: name }))
  let sent: Record<string, string> = {}
  const s = await fake(t, (body) => {
    sent = Object.fromEntries(body.tools.map((x: any) => [x.function.description, x.function.name]))
    const call = (i: number, name: string | undefined) => ({
      index: i,
      id: `c${i}`,
      type: 'function',
      function: { name, arguments: '{}' }
    })
    return {
      stream: sseEvents([
        deltaChunk({
          tool_calls: [call(0, sent['fs.read']), call(1, sent[long]), call(2, 'fs_read'), call(3, sent['fs:read'])]
        }),
        deltaChunk({}, 'tool_calls')
      ])
    }
  })
  const history: AiMessage[] = [
    { role: 'user', content: 'earlier' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'old', name: 'fs.read', arguments: {} }] },
    { role: 'tool', toolCallId: 'old', content: 'a note' }
  ]
  const events = await collect(runtime(s.url).stream({ message: 'read', tools, history }))
  const wire = names.map((n) => sent[n]!)
  t.ok(
    wire.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)),
    `every name matches OpenAI's rule: ${wire.join(', ')}`
  )
  t.equal(new Set(wire).size, names.length, 'no two tools share a name')
  t.equal(sent.fs_read, 'fs_read')
  t.equal(sent.get_time, 'get_time')
  t.same(
    events.flatMap((e) => (e.type === 'tool-call' ? [e.call.name] : [])),
    ['fs.read', long, 'fs_read', 'fs:read']
  )
  const old = s.on('/chat/completions')[0].messages.find((m: any) => m.tool_calls !== undefined)
  t.equal(old.tool_calls[0].function.name, sent['fs.read'], 'a call in the history goes by the same stand-in')
})

t.test('openai: failures become one clean error event', async (t) => {
  const cases: [string, Reply, string, RegExp][] = [
    [
      'HTTP 500',
      { status: 500, json: { error: { message: 'model exploded' } } },
      'http',
      /answered 500.*model exploded/
    ],
    ['HTTP 429', { status: 429, json: { error: { message: 'slow down' } } }, 'capacity', /answered 429/],
    [
      'a chunk that is not JSON',
      { stream: sseEvents([deltaChunk({ content: 'a' }), '{not json']) },
      'protocol',
      /not JSON/
    ],
    ['lines that are not SSE', { stream: ['<html>oops</html>\n'] }, 'protocol', /not server-sent events/],
    [
      'tool arguments that are not JSON',
      {
        stream: sseEvents([
          deltaChunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'get_time', arguments: '{"ci' } }] })
        ])
      },
      'protocol',
      /arguments for tool 'get_time' that are not JSON/
    ],
    [
      'an error object mid-stream',
      { stream: sseEvents([{ error: { message: 'overloaded' } }]) },
      'http',
      /mid-stream: overloaded/
    ],
    ['a server that hangs mid-stream', LONG, 'timeout', /sent nothing for 300 ms/],
    ['a server that never answers', { hang: true }, 'timeout', /sent nothing for 300 ms/],
    [
      'a dropped connection',
      { stream: sseEvents([deltaChunk({ content: 'a' })], false), then: 'drop' },
      'network',
      /dropped the stream|before \[DONE\]/
    ],
    [
      'a stream that ends without [DONE]',
      { stream: sseEvents([deltaChunk({ content: 'a' })], false) },
      'network',
      /closed the stream before \[DONE\]/
    ]
  ]
  for (const [what, reply, code, message] of cases) {
    const s = await fake(t, () => reply)
    const events = await collect(runtime(s.url, { idleTimeoutMs: 300 }).stream({ message: 'x', tools: TOOLS }))
    t.equal(events.filter((e) => e.type === 'done' || e.type === 'error').length, 1, `${what}: one terminal`)
    t.match(last(events), { type: 'error', code, message }, what)
  }
})

t.test('openai: a server that drips chunks forever hits the whole-request bound', async (t) => {
  const drip = Array.from({ length: 400 }, () => ': keep-alive\n')
  const s = await fake(t, () => ({ stream: drip, then: 'hang', intervalMs: 20 }))
  const events = await collect(runtime(s.url, { timeoutMs: 300, idleTimeoutMs: 200 }).stream({ message: 'x' }))
  t.match(events, [{ type: 'error', code: 'timeout', message: /did not finish within 300 ms/ }])
})

t.test('openai: unreachable server and the concurrency limit', async (t) => {
  const s = await fake(t, () => LONG)
  const url = s.url
  const down = await collect(runtime('http://127.0.0.1:1/v1').stream({ message: 'x' }))
  t.match(down, [{ type: 'error', code: 'network', message: /unreachable/ }])
  const rt = runtime(url, { maxConcurrency: 1 })
  const ctl = new AbortController()
  let streaming!: () => void
  const started = new Promise<void>((resolve) => {
    streaming = resolve
  })
  const first = collect(rt.stream({ message: 'long' }, ctl.signal), (e) => {
    if (e.type === 'text') streaming()
  })
  await started
  const second = await collect(rt.stream({ message: 'x' }))
  t.match(second, [{ type: 'error', code: 'capacity', message: /max-concurrency/ }])
  ctl.abort()
  t.match(last(await first), { type: 'error', code: 'cancelled' })
  t.match(
    last(await collect(rt.stream({ message: 'x' }, AbortSignal.abort()))),
    { code: 'cancelled' },
    'the slot was released'
  )
})

t.test('openai: a consumer slower than the idle bound is not mistaken for a silent server', async (t) => {
  const s = await fake(t, () => ({ stream: TEXT }))
  const events: AiEvent[] = []
  for await (const e of runtime(s.url, { idleTimeoutMs: 100 }).stream({ message: 'hi' })) {
    events.push(e)
    if (e.type === 'text') await new Promise((resolve) => setTimeout(resolve, 150))
  }
  t.match(last(events), { type: 'done', finishReason: 'stop' })
})

t.test('openai: cancelling after the whole body arrived ends at once, with no text after the abort', async (t) => {
  const s = await fake(t, () => ({ stream: TEXT }))
  const ctl = new AbortController()
  const events: AiEvent[] = []
  const started = Date.now()
  for await (const e of runtime(s.url).stream({ message: 'hi' }, ctl.signal)) {
    events.push(e)
    if (e.type === 'text') {
      await new Promise((resolve) => setTimeout(resolve, 50))
      ctl.abort()
    }
  }
  t.ok(Date.now() - started < 1500, 'did not hang on the finished body')
  t.same(events, [
    { type: 'text', delta: 'Hello' },
    { type: 'error', code: 'cancelled', message: 'cancelled by the caller' }
  ])
})

t.test('openai: unavailable without base URL or model', async (t) => {
  t.notOk(
    new OpenAiRuntime({ baseUrl: '', model: '', timeoutMs: 1, idleTimeoutMs: 1, maxConcurrency: 1 }).isAvailable()
  )
})
