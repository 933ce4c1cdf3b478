// Interactions quota: one principal started 1 500 background interactions of
// 60 KB in 9 s (RSS +690 MB, data directory +457 MB). Runs in flight and request bytes are now
// bounded per principal, with 429 and Retry-After; another principal is not locked out, and a
// refused request starts nothing.
import t from 'tap'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { ALICE, BOB, startInteractions } from '../interactions/helpers.js'

t.test('runs in flight per principal: the next one is 429 with Retry-After; others still run', async (t) => {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  // every turn hangs after its first delta, so runs stay in flight until cancelled
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'held ' })], false), then: 'hang' })
  const tp = await startInteractions({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    'platform.interactions.quota.runs-in-flight': 3
  })
  t.teardown(tp.close)
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    const r = await tp.api.create({ message: `run ${i}`, background: true })
    t.equal(r.status, 200, `run ${i} starts`)
    ids.push(r.body.id)
  }
  const before = (await tp.api.call('GET', '/api/interactions', { token: ALICE })).body.length
  const over = await tp.api.create({ message: 'one too many', background: true })
  t.equal(over.status, 429, 'the fourth is refused')
  t.match(over.body, { code: 'PLT_ERR_INTERACTIONS_QUOTA', error: /at most 3 runs in flight per principal/ })
  t.equal(over.headers.get('retry-after'), '1')
  t.equal((await tp.api.call('GET', '/api/interactions', { token: ALICE })).body.length, before, 'nothing stored')
  t.equal((await tp.api.create({ message: 'bob is not locked out', background: true }, BOB)).status, 200)
  // a run that ends frees its place
  t.ok((await tp.api.call('POST', `/api/interactions/${ids[0]}/cancel`, { token: ALICE })).status < 300, 'cancelled')
  await tp.api.settled(ids[0]!)
  t.equal(
    (await tp.api.create({ message: 'after a cancel', background: true })).status,
    200,
    'a run seen ended frees its place at once'
  )
})

t.test('request bytes per principal: a flood of 70 KB bodies is cut off by the byte budget', async (t) => {
  const tp = await startInteractions({ 'platform.interactions.quota.bytes-per-minute': 300_000 })
  t.teardown(tp.close)
  // four fit with 20 KB to spare, which the budget's refill (5 KB a second) takes 10 s to bring up to a
  // fifth: with 60 KB bodies the fifth was 175 bytes short, and a slow machine refilled them in between
  const body = { message: 'x'.repeat(70_000), background: true }
  const statuses: number[] = []
  let retryAfter: string | null = null
  for (let i = 0; i < 10; i++) {
    const r = await tp.api.create(body)
    statuses.push(r.status)
    if (r.status === 429) {
      retryAfter ??= r.headers.get('retry-after')
      t.match(r.body, { code: 'PLT_ERR_INTERACTIONS_QUOTA', error: /300000 request bytes per minute/ })
    }
  }
  t.same(statuses.slice(0, 4), [200, 200, 200, 200], 'the budget admits what fits')
  t.ok(
    statuses.slice(5).every((s) => s === 429),
    `the rest are refused: ${statuses.join(' ')}`
  )
  t.ok(Number(retryAfter) >= 1, `Retry-After in seconds: ${retryAfter}`)
  t.equal((await tp.api.create(body, BOB)).status, 200, 'another principal has its own budget')
})
