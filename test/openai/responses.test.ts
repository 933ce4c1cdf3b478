import t from 'tap'
import { ALICE, BOB, client, failure, startOpenAi } from './helpers.js'
import { RESPONSE_KEYS } from './open-responses-schema.js'

const tp = await startOpenAi()
t.teardown(tp.close)
const alice = client(tp)

t.test('GET /v1/models lists the agents, owned by their plugin', async (t) => {
  const page = await alice.models.list()
  const demo = page.data.find((m) => m.id === 'demo')
  t.match(demo, { id: 'demo', object: 'model', owned_by: 'demo-agent', created: Number })
  t.same(await alice.models.retrieve('demo'), demo)
  t.match(await failure(alice.models.retrieve('nope')), { status: 404 })
})

t.test('a non-streamed response: every key, usage, metadata, readable through GET', async (t) => {
  const r = await alice.responses.create({
    model: 'demo',
    input: 'hello there',
    instructions: 'Be brief.',
    metadata: { tag: 'x' }
  })
  t.match(r, {
    id: /^int-/,
    object: 'response',
    status: 'completed',
    model: 'demo',
    instructions: 'Be brief.',
    metadata: { tag: 'x' },
    previous_response_id: null,
    error: null,
    incomplete_details: null,
    store: true,
    background: false
  })
  for (const k of RESPONSE_KEYS) t.ok(Object.hasOwn(r, k), `key ${k}`)
  t.equal(r.output[0]?.type, 'message')
  t.ok(r.output_text.length > 0, 'the client reads output_text')
  // that the model receives the instructions is the fake model's Open Responses 'system prompt' case
  t.match(r.usage, { input_tokens: Number, output_tokens: Number, total_tokens: Number })
  const got = await alice.responses.retrieve(r.id)
  t.equal(got.output_text, r.output_text)
  t.equal(got.status, 'completed')
  // the same record is an interaction
  const rest = await fetch(`${tp.url}/api/interactions/${r.id}`, { headers: { authorization: `Bearer ${ALICE}` } })
  t.equal(rest.status, 200)
  t.equal((await rest.json()).finalText, r.output_text)
  t.match(await failure(client(tp, BOB).responses.retrieve(r.id)), { status: 404 }, "another owner's is a 404")
})

t.test('input items: system message, multi-turn, and previous_response_id continues', async (t) => {
  const r = await alice.responses.create({
    model: 'demo',
    input: [
      { role: 'system', content: 'Speak like a pirate.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'ahoy' },
      { role: 'user', content: [{ type: 'input_text', text: 'and now?' }] }
    ]
  })
  t.equal(r.status, 'completed')
  const recorded = await fetch(`${tp.url}/api/interactions/${r.id}`, { headers: { authorization: `Bearer ${ALICE}` } })
  t.match(JSON.stringify(await recorded.json()), /Speak like a pirate\./, 'the system item went into the turn')
  const next = await alice.responses.create({ model: 'demo', input: 'again', previous_response_id: r.id })
  t.equal(next.previous_response_id, r.id)
  t.equal(next.status, 'completed')
  t.match(await failure(alice.responses.create({ model: 'demo', input: 'x', previous_response_id: 'int-unknown' })), {
    status: 404,
    param: 'previous_response_id'
  })
})

t.test('store: false answers and keeps nothing', async (t) => {
  const r = await alice.responses.create({ model: 'demo', input: 'hello', store: false })
  t.equal(r.status, 'completed')
  t.match(r, { store: false }, 'the client types leave store out; the wire has it')
  t.match(await failure(alice.responses.retrieve(r.id)), { status: 404 })
})

t.test('background: answers in progress at once, then retrieve until completed', async (t) => {
  const r = await alice.responses.create({ model: 'demo', input: 'hello', background: true })
  t.equal(r.background, true)
  t.ok(['queued', 'in_progress', 'completed'].includes(r.status ?? ''))
  let got = r
  while (got.status === 'queued' || got.status === 'in_progress') {
    await new Promise((resolve) => setTimeout(resolve, 20))
    got = await alice.responses.retrieve(r.id)
  }
  t.equal(got.status, 'completed')
  t.ok(got.output_text.length > 0)
})

t.test('streamed: the semantic events in order, sequence numbers by one, text equals the deltas', async (t) => {
  const stream = await alice.responses.create({ model: 'demo', input: 'hello stream', stream: true })
  const events: any[] = []
  for await (const e of stream) events.push(e)
  const types = events.map((e) => e.type)
  t.same(types.slice(0, 4), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added'
  ])
  t.same(types.slice(-4), [
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed'
  ])
  t.same(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i)
  )
  const text = events
    .filter((e) => e.type === 'response.output_text.delta')
    .map((e) => e.delta)
    .join('')
  const done = events.at(-1).response
  t.equal(done.status, 'completed')
  t.equal(done.output[0].content[0].text, text)
  t.equal(events.find((e) => e.type === 'response.output_text.done').text, text)

  // resume: the same events rebuilt from the stored steps, after the one the client had
  const resumed: any[] = []
  const again = await alice.responses.retrieve(done.id, { stream: true, starting_after: 2 })
  for await (const e of again) resumed.push(e)
  t.same(
    resumed.map((e) => e.type),
    types.slice(3)
  )
  t.same(resumed.at(-1).response.output, done.output)
})

t.test('cancel and delete', async (t) => {
  const done = await alice.responses.create({ model: 'demo', input: 'hello' })
  t.match(await failure(alice.responses.cancel(done.id)), { status: 400 }, 'a completed response is not cancellable')
  const del: unknown = await alice.responses.delete(done.id)
  t.same(del, { id: done.id, object: 'response', deleted: true })
  t.match(await failure(alice.responses.retrieve(done.id)), { status: 404 })
  t.match(await failure(alice.responses.delete(done.id)), { status: 404 })
  t.match(await failure(alice.responses.cancel('int-unknown')), { status: 404 })
})
