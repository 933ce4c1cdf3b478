import t from 'tap'
import { DemoRuntime, type AiEvent } from '../../runtime/ai/index.js'
import { countTokens } from '../../runtime/ai/demo-runtime.js'
import { type AiRuntimeRequest, type AiTextSink, type AiToolSpec } from '../../runtime/ai/runtime.js'
import { collect, runRuntimeContract } from './runtime-contract.js'

// the bundled demo agent's tools, as the pipeline will hand them over
const TOOLS: AiToolSpec[] = [
  {
    name: 'platform_fact',
    description: 'Returns a short fact about a platform topic',
    inputSchema: {
      type: 'object',
      properties: { topic: { type: 'string', enum: ['plugins', 'sandbox', 'mcp', 'governance'] } },
      required: ['topic']
    }
  },
  {
    name: 'topics',
    description: 'Lists the topics platform_fact knows',
    inputSchema: { type: 'object', properties: {} }
  }
]
const SYSTEM = 'You are the platform guide. Answer briefly and only about the agent platform.'

runRuntimeContract(t, 'demo', async () => ({
  runtime: new DemoRuntime(),
  text: { systemPrompt: SYSTEM, message: 'hello there', tools: TOOLS },
  tool: { systemPrompt: SYSTEM, message: 'How do sandboxes work?', tools: TOOLS },
  long: { systemPrompt: SYSTEM, message: 'say a long thing '.repeat(20) },
  toolNames: TOOLS.map((x) => x.name)
}))

t.test(
  'demo: a question about sandboxes calls platform_fact with topic sandbox, then answers from the result',
  async (t) => {
    const rt = new DemoRuntime()
    const first = await collect(rt.stream({ systemPrompt: SYSTEM, message: 'How do sandboxes work?', tools: TOOLS }))
    const call = first.find((e) => e.type === 'tool-call') as Extract<AiEvent, { type: 'tool-call' }>
    t.same(
      { name: call.call.name, arguments: call.call.arguments },
      { name: 'platform_fact', arguments: { topic: 'sandbox' } }
    )
    const fact = 'Plugins run in an isolate by default; worker and inline tiers need an operator grant.'
    const second = await collect(
      rt.stream({
        systemPrompt: SYSTEM,
        tools: TOOLS,
        history: [
          { role: 'user', content: 'How do sandboxes work?' },
          { role: 'assistant', content: '', toolCalls: [call.call] },
          { role: 'tool', toolCallId: call.call.id, name: 'platform_fact', content: fact }
        ]
      })
    )
    const deltas = second.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta)
    t.ok(deltas.length > 5, 'streams word by word')
    t.match(deltas.join(''), fact, 'the answer carries the tool result')
    t.match(second[second.length - 1], { type: 'done', finishReason: 'stop' })
  }
)

t.test('demo: which topics are known calls topics; an unrelated message calls no tool', async (t) => {
  const rt = new DemoRuntime()
  const a = await collect(rt.stream({ message: 'Which topics do you know?', tools: TOOLS }))
  t.match(
    a.find((e) => e.type === 'tool-call'),
    { call: { name: 'topics', arguments: {} } }
  )
  const b = await collect(rt.stream({ message: 'good morning', tools: TOOLS }))
  t.equal(b.filter((e) => e.type === 'tool-call').length, 0)
})

t.test('demo: a bundled agent answers in its part and never repeats its system prompt', async (t) => {
  const rt = new DemoRuntime()
  const say = async (req: Parameters<DemoRuntime['stream']>[0]) =>
    (await collect(rt.stream(req))).flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('')
  const guide = await say({ systemPrompt: SYSTEM, message: 'good morning', tools: TOOLS })
  t.equal(guide, 'You said: "good morning". I can look up plugins, sandbox, mcp, governance: ask about one of them.')
  const critic = await say({ systemPrompt: 'You are the critic. Say what a good answer must cover.', message: 'hi' })
  t.match(critic, /^You said: "hi"\. As the critic: a good answer says what it is/)
  for (const said of [guide, critic]) t.notMatch(said, /Answer briefly|Say what a good answer must cover|You are the/)
  t.equal(await say({ systemPrompt: 'Keep the launch codes: 0000.', message: 'codes?' }), 'You said: "codes?".')
})

t.test('demo: deterministic, and usage counts whitespace-separated words', async (t) => {
  const rt = new DemoRuntime()
  const req = { systemPrompt: 'Be brief.', message: 'tell me about governance', tools: TOOLS }
  t.same(await collect(rt.stream(req)), await collect(rt.stream(req)), 'same request, same events')
  const text = await collect(rt.stream({ systemPrompt: 'Be brief.', message: 'hi you' }))
  const out = text
    .filter((e) => e.type === 'text')
    .map((e) => (e as { delta: string }).delta)
    .join('')
  t.match(
    text.find((e) => e.type === 'usage'),
    { usage: { input: 4, output: countTokens(out), cachedInput: 0, total: 4 + countTokens(out), model: 'demo-1' } }
  )
  t.equal(countTokens('  a  b\tc\n'), 3)
  t.equal(countTokens(''), 0)
  // counted in place, as splitting on \s would: every separator \s knows, none it does not
  const pieces = [
    'w',
    'é',
    '😀',
    ' ',
    '\t',
    '\n',
    '\v',
    '\f',
    '\r',
    '\u00a0',
    '\u1680',
    '\u2000',
    '\u200a',
    '\u2028',
    '\u2029',
    '\u202f',
    '\u205f',
    '\u3000',
    '\ufeff',
    '\u200b',
    '\u0085',
    '\u180e'
  ]
  // one assertion: a name holding U+2028 would break the TAP line it is printed on
  const wrong: string[] = []
  for (let i = 0; i < 300; i++) {
    let s = ''
    for (let j = 0; j < i % 12; j++) s += pieces[(i * 7 + j * 13) % pieces.length]
    const t2 = s.trim()
    if (countTokens(s) !== (t2 === '' ? 0 : t2.split(/\s+/).length)) wrong.push(escape(s))
  }
  t.same(wrong, [], 'every string counts as splitting on \\s does')
})

/**
 * A stream whose deltas go to a sink, read as the events it stands for: each delta a `text` event
 * where the sink got it. The stream itself must yield no `text` event then.
 */
async function viaSink(
  rt: DemoRuntime,
  req: AiRuntimeRequest,
  signal?: AbortSignal,
  onDelta?: AiTextSink
): Promise<AiEvent[]> {
  const events: AiEvent[] = []
  const sink = (delta: string): void | Promise<void> => {
    events.push({ type: 'text', delta })
    return onDelta?.(delta)
  }
  for await (const e of rt.stream(req, signal, sink)) {
    if (e.type === 'text') throw new Error('a text event beside the sink')
    events.push(e)
  }
  return events
}

// every answer's events, as events and through a text sink: the same
const MODES: [string, (rt: DemoRuntime, req: AiRuntimeRequest) => Promise<AiEvent[]>][] = [
  ['events', (rt, req) => collect(rt.stream(req))],
  ['sink', (rt, req) => viaSink(rt, req)]
]

t.test('demo: the answer streams word by word, each word with the whitespace after it', async (t) => {
  const rt = new DemoRuntime()
  for (const [mode, run] of MODES)
    for (const message of ['hi', 'a  b\tc\n', ' lead', 'x '.repeat(5), '']) {
      const events = await run(rt, { message })
      const deltas = events.flatMap((e) => (e.type === 'text' ? [e.delta] : []))
      t.same(deltas, `You said: "${message}".`.split(/(?<=\s)/), `${mode}: ${JSON.stringify(message)}`)
      t.same(
        events.slice(deltas.length).map((e) => e.type),
        ['usage', 'done'],
        `${mode}: usage and done after the last word`
      )
      t.match(
        events[deltas.length],
        { usage: { output: countTokens(deltas.join('')), input: countTokens(message) } },
        `${mode}: usage counts the words, not the deltas`
      )
    }
})

t.test('demo: maxOutputTokens cuts after that many words, whitespace runs not counted', async (t) => {
  const rt = new DemoRuntime()
  for (const [mode, run] of MODES)
    for (const message of ['a  b\tc\n d', ' lead  two', 'x '.repeat(6)]) {
      const full = `You said: "${message}".`
      for (let max = 0; max <= countTokens(full) + 1; max++) {
        const events = await run(rt, { message, maxOutputTokens: max })
        const out = events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('')
        const cut = max < countTokens(full)
        t.equal(countTokens(out), Math.min(max, countTokens(full)), `${mode}: ${JSON.stringify(message)} at ${max}`)
        t.same(events.at(-1), { type: 'done', finishReason: cut ? 'length' : 'stop' })
        t.ok(full.startsWith(out))
      }
    }
})

t.test('demo: through a sink, each answer gets one word per event-loop turn, in order', async (t) => {
  const rt = new DemoRuntime()
  const got: string[][] = [[], []]
  const turns: number[][] = [[], []]
  let turn = 0
  let ticking = true
  const tick = (): void => {
    turn++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  const answers = ['one two three four', 'five six'].map((message, i) =>
    viaSink(rt, { message }, undefined, (d) => {
      got[i]!.push(d)
      turns[i]!.push(turn)
    })
  )
  await Promise.all(answers)
  ticking = false
  t.same(got, [
    ['You ', 'said: ', '"one ', 'two ', 'three ', 'four".'],
    ['You ', 'said: ', '"five ', 'six".']
  ])
  for (const ts of turns) t.same(ts, [...new Set(ts)], 'never two words of one answer in one turn')
})

t.test('demo: a sink that answers a promise holds the next word until it settles', async (t) => {
  const rt = new DemoRuntime()
  const got: string[] = []
  let release: (() => void) | undefined
  const done = viaSink(rt, { message: 'a b' }, undefined, (d) => {
    got.push(d)
    if (got.length === 2) return new Promise<void>((r) => (release = r))
  })
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
  t.same(got, ['You ', 'said: '], 'nothing while the promise is pending')
  release!()
  const events = await done
  t.same(got, ['You ', 'said: ', '"a ', 'b".'])
  t.same(events.at(-1), { type: 'done', finishReason: 'stop' })
})

t.test('demo: what a sink throws or rejects with reaches the stream reader', async (t) => {
  const rt = new DemoRuntime()
  await t.rejects(
    viaSink(rt, { message: 'a b' }, undefined, (d) => {
      if (d === 'said: ') throw new Error('sink broke')
    }),
    { message: 'sink broke' }
  )
  await t.rejects(
    viaSink(rt, { message: 'a b' }, undefined, (d) =>
      d === 'said: ' ? Promise.reject(new Error('sink refused')) : undefined
    ),
    { message: 'sink refused' }
  )
})

t.test('demo: through a sink, a cancelled answer stops at the next word and counts what it sent', async (t) => {
  const ctl = new AbortController()
  let n = 0
  const events = await viaSink(new DemoRuntime(), { message: 'one two three four five' }, ctl.signal, () => {
    if (++n === 3) ctl.abort()
  })
  const sent = events.flatMap((e) => (e.type === 'text' ? [e.delta] : []))
  t.same(sent, ['You ', 'said: ', '"one '])
  const u = events.find((e) => e.type === 'usage') as Extract<AiEvent, { type: 'usage' }>
  t.equal(u.usage.output, countTokens(sent.join('')))
  t.same(events.at(-1), { type: 'done', finishReason: 'cancelled' })
  const before = new AbortController()
  before.abort()
  t.same(
    (await viaSink(new DemoRuntime(), { message: 'hi' }, before.signal)).map((e) => e.type),
    ['usage', 'done'],
    'aborted before it starts: no word'
  )
})

t.test('demo: a cancelled answer reports as output the words it sent before the abort', async (t) => {
  const ctl = new AbortController()
  const events: AiEvent[] = []
  for await (const e of new DemoRuntime().stream({ message: 'one two three four five' }, ctl.signal)) {
    events.push(e)
    if (e.type === 'text' && events.length === 3) ctl.abort()
  }
  const sent = events.flatMap((e) => (e.type === 'text' ? [e.delta] : []))
  t.same(sent, ['You ', 'said: ', '"one '])
  const u = events.find((e) => e.type === 'usage') as Extract<AiEvent, { type: 'usage' }>
  t.equal(u.usage.output, countTokens(sent.join('')))
  t.same(events.at(-1), { type: 'done', finishReason: 'cancelled' })
})
