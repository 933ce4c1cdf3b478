import t from 'tap'
import { ALICE, BOB, client, failure, startOpenAi } from './helpers.js'

// the demo agent on the demo runtime, records in the default store
const tp = await startOpenAi()
t.teardown(tp.close)
const alice = client(tp)

t.test('input_items: every item, paged by limit and after, in either order', async (t) => {
  const r = await alice.responses.create({
    model: 'demo',
    input: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: [{ type: 'input_text', text: 'three' }] }
    ]
  })
  const all = await alice.responses.inputItems.list(r.id, { order: 'asc' })
  t.same(
    all.data.map((i: any) => [i.type, i.role, i.content[0].text]),
    [
      ['message', 'system', 'Be brief.'],
      ['message', 'user', 'one'],
      ['message', 'assistant', 'two'],
      ['message', 'user', 'three']
    ]
  )
  const desc = await alice.responses.inputItems.list(r.id)
  t.same(
    desc.data.map((i) => i.id),
    all.data.map((i) => i.id).reverse(),
    'newest first by default'
  )
  // the page object as the wire has it (the client's page hides first_id and last_id)
  const page = await fetch(`${tp.url}/v1/responses/${r.id}/input_items?order=asc&limit=3`, {
    headers: { authorization: `Bearer ${ALICE}` }
  })
  t.match(await page.json(), { object: 'list', has_more: true, first_id: all.data[0]!.id, last_id: all.data[2]!.id })
  const first = await alice.responses.inputItems.list(r.id, { order: 'asc', limit: 3 })
  t.equal(first.has_more, true)
  const rest = await alice.responses.inputItems.list(r.id, { order: 'asc', limit: 3, after: first.data.at(-1)!.id })
  t.same(
    rest.data.map((i) => i.id),
    [all.data[3]!.id]
  )
  t.equal(rest.has_more, false)
  // the client pages on by itself
  const seen: string[] = []
  for await (const item of alice.responses.inputItems.list(r.id, { order: 'asc', limit: 1 })) seen.push(item.id)
  t.same(
    seen,
    all.data.map((i) => i.id)
  )
  t.match(await failure(alice.responses.inputItems.list(r.id, { limit: 0 })), { status: 400, param: 'limit' })
  t.match(await failure(alice.responses.inputItems.list(r.id, { after: 'item_nope' })), { status: 400, param: 'after' })
  t.match(await failure(alice.responses.inputItems.list(r.id, { order: 'up' as never })), {
    status: 400,
    param: 'order'
  })
  t.match(await failure(client(tp, BOB).responses.inputItems.list(r.id)), { status: 404 }, "another owner's")
  // a string input is one user message
  const s = await alice.responses.create({ model: 'demo', input: 'just this' })
  t.match((await alice.responses.inputItems.list(s.id)).data, [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'just this' }] }
  ])
})

t.test('Idempotency-Key: a retry gets the first response; another body under the key is a 409', async (t) => {
  const body = { model: 'demo', input: 'once only' }
  const a = await alice.responses.create(body, { headers: { 'Idempotency-Key': 'k-responses-1' } })
  const b = await alice.responses.create(body, { headers: { 'Idempotency-Key': 'k-responses-1' } })
  t.equal(b.id, a.id)
  t.equal(b.output_text, a.output_text)
  t.match(
    await failure(
      alice.responses.create({ model: 'demo', input: 'other' }, { headers: { 'Idempotency-Key': 'k-responses-1' } })
    ),
    {
      name: 'ConflictError',
      status: 409,
      code: 'PLT_ERR_IDEMPOTENCY_KEY_REUSED'
    }
  )
  const c = await client(tp, BOB).responses.create(body, { headers: { 'Idempotency-Key': 'k-responses-1' } })
  t.not(c.id, a.id, 'keys belong to their principal')
  const list = await fetch(`${tp.url}/api/interactions`, { headers: { authorization: `Bearer ${ALICE}` } })
  t.equal((await list.json()).filter((i: any) => i.id === a.id).length, 1)
})

t.test('max_output_tokens: the model stops there and the response is incomplete', async (t) => {
  const r = await alice.responses.create({ model: 'demo', input: 'a b c d e f g h', max_output_tokens: 3 })
  t.match(r, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 3 })
  t.equal(r.output_text.trim().split(/\s+/).length, 3)
  t.equal((r.output[0] as any).status, 'incomplete')
  t.equal(r.usage?.output_tokens, 3)
  t.equal((await alice.responses.retrieve(r.id)).status, 'incomplete')
  const events: any[] = []
  for await (const e of await alice.responses.create({
    model: 'demo',
    input: 'a b c d e f',
    max_output_tokens: 2,
    stream: true
  }))
    events.push(e)
  t.equal(events.at(-1).type, 'response.incomplete')
  t.match(events.at(-1).response.incomplete_details, { reason: 'max_output_tokens' })
  t.equal(events.find((e) => e.type === 'response.output_item.done').item.status, 'incomplete')
  const whole = await alice.responses.create({ model: 'demo', input: 'hi', max_output_tokens: 1000 })
  t.equal(whole.status, 'completed', 'a bound the answer stays under changes nothing')
})
