import t from 'tap'
import { SessionFrames, addUsage, feedbackLines, FEEDBACK_LINE_MAX } from '../../runtime/ai/agent-frames.js'
import { parseClientFrame } from '../../runtime/ai/agent-prompt.js'
import { SseStream } from '../../runtime/http/index.js'

t.test('session frames: valid JSON, the three families, session id and a rising seq', async (t) => {
  const f = new SessionFrames('s-"1"')
  const frames = [
    f.event('text-delta', { text: 'a "quoted"\nline' }),
    f.metadata('model', 'demo-1'),
    f.metadata('nothing', undefined),
    f.simple('error', 'bad\u2028news'),
    f.simple('complete'),
    f.refusal('busy', 'wait')
  ].map((s) => JSON.parse(s) as Record<string, unknown>)
  t.same(frames, [
    { event: 'text-delta', data: { text: 'a "quoted"\nline' }, sessionId: 's-"1"', seq: 1 },
    { type: 'metadata', key: 'model', value: 'demo-1', sessionId: 's-"1"', seq: 2 },
    { type: 'metadata', key: 'nothing', value: null, sessionId: 's-"1"', seq: 3 },
    { type: 'error', data: 'bad\u2028news', sessionId: 's-"1"', seq: 4 },
    { type: 'complete', sessionId: 's-"1"', seq: 5 },
    { event: 'error', data: { message: 'wait', code: 'busy', recoverable: true }, sessionId: 's-"1"', seq: 6 }
  ])
})

t.test('a text delta frame is the text-delta event, byte for byte, in the same seq', async (t) => {
  const fast = new SessionFrames('s-"1"')
  const slow = new SessionFrames('s-"1"')
  const bytes = new SessionFrames('s-"1"')
  const sse = new SessionFrames('s-"1"')
  // written as bytes after a frame already in the buffer, which they must leave whole
  const written = (f: SessionFrames, text: string, asSse: boolean): string => {
    const buf = Buffer.alloc(3 + f.textDeltaRoom(text), 0xff)
    buf.write('abc')
    const end = f.writeTextDelta(buf, 3, text, asSse)
    t.equal(buf.toString('latin1', 0, 3), 'abc')
    return buf.toString('utf8', 3, end)
  }
  for (const text of [
    'You ',
    '',
    'a "quoted"\nline\t',
    '\u2028\u2029',
    '\ud800 lone',
    'é 😀 ',
    '\\',
    '</script>',
    '\u0000\u001f',
    '\u007f~ ',
    'x'.repeat(5000),
    '😀'.repeat(300) + '\udfff'.repeat(300)
  ]) {
    // escape(): a name holding U+2028 would break the TAP line it is printed on
    const name = escape(text.slice(0, 20))
    const frame = slow.event('text-delta', { text })
    t.equal(fast.textDelta(text), frame, name)
    t.equal(written(bytes, text, false), frame, `bytes: ${name}`)
    // as one server-sent event: the frame on one data line
    t.equal(written(sse, text, true), SseStream.frame({ data: frame }), `SSE: ${name}`)
  }
  const done = slow.simple('complete')
  t.equal(fast.simple('complete'), done, 'one seq shared by every kind of frame')
  t.equal(bytes.simple('complete'), done, 'the deltas written as bytes take the same seq')
  t.equal(sse.simple('complete'), done, 'the SSE deltas take the same seq')
  // seqs of one to four digits
  const many = new SessionFrames('m')
  const ref = new SessionFrames('m')
  const buf = Buffer.alloc(many.textDeltaRoom('w '))
  const wrong: number[] = []
  for (let seq = 1; seq <= 1200; seq++)
    if (buf.toString('utf8', 0, many.writeTextDelta(buf, 0, 'w ', false)) !== ref.textDelta('w ')) wrong.push(seq)
  t.same(wrong, [], 'every seq from 1 to 1200')
  t.equal(many.simple('complete'), ref.simple('complete'))
})

t.test('usage sums over rounds; feedback lines are bounded', async (t) => {
  const u = addUsage(addUsage(undefined, { input: 1, output: 2, cachedInput: 0, total: 3, model: 'a' }), {
    input: 10,
    output: 20,
    cachedInput: 5,
    total: 30,
    model: 'b'
  })
  t.same(u, { input: 11, output: 22, cachedInput: 5, total: 33, model: 'b' })
  t.same(
    feedbackLines(['short', 'x'.repeat(600)]).map((l) => l.length),
    [5, FEEDBACK_LINE_MAX]
  )
})

t.test('client frames: plain text, envelopes, cancel, and refusals', async (t) => {
  t.same(parseClientFrame('hello', 32), { kind: 'prompt', message: 'hello' })
  t.same(parseClientFrame('42', 32), { kind: 'prompt', message: '42' }, 'JSON that is not an object is prose')
  t.same(parseClientFrame('{oops', 32), { kind: 'prompt', message: '{oops' })
  t.same(parseClientFrame(' {"type":"cancel"} ', 32), { kind: 'cancel' })
  t.same(parseClientFrame('{"message":"m","conversationId":"c","metadata":{"a":1},"model":"demo"}', 32), {
    kind: 'prompt',
    message: 'm',
    conversationId: 'c',
    metadata: { a: 1 },
    model: 'demo'
  })
  for (const [bad, why] of [
    ['', /empty prompt/],
    ['{"type":"cancel","x":1}', /unknown frame/],
    ['{"type":"content"}', /unknown frame/],
    ['[1]', /unknown frame/],
    ['{"message":""}', /non-empty string/],
    ['{"message":"m","conversationId":""}', /conversationId/],
    [`{"message":"m","conversationId":"${'c'.repeat(201)}"}`, /conversationId/],
    ['{"message":"m","metadata":[1]}', /metadata/],
    ['{"message":"m","model":7}', /model/],
    ['{"message":"m","other":1}', /unknown field 'other'/]
  ] as const) {
    const f = parseClientFrame(bad, 32)
    t.match(f, { kind: 'bad', message: why }, bad.slice(0, 40))
  }
  // nesting beyond platform.server.json-max-depth does not parse as JSON: it is a prompt like any prose
  const deep = '{"message":"m","x":' + '['.repeat(40) + ']'.repeat(40) + '}'
  t.same(parseClientFrame(deep, 32), { kind: 'prompt', message: deep })
})
