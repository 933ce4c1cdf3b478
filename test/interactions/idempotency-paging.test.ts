import t from 'tap'
import { IdempotencyKeys } from '../../runtime/interactions/idempotency.js'
import type { Interaction } from '../../runtime/interactions/index.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { ALICE, BOB, startInteractions } from './helpers.js'

t.test('Idempotency-Key: a retry returns the first interaction; another body is 409', async (t) => {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  const tp = await startInteractions({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model'
  })
  t.teardown(tp.close)
  const { api } = tp
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'once' }, 'stop')]), intervalMs: 30 })
  const key = { 'idempotency-key': 'order-42' }

  // two requests at once: the second waits for the first's run instead of starting its own
  const [a, b] = await Promise.all([
    api.create({ message: 'pay' }, ALICE, key),
    api.create({ message: 'pay' }, ALICE, key)
  ])
  t.equal(a.body.id, b.body.id)
  t.match(a.body, { status: 'COMPLETED', finalText: 'once' })
  t.same(b.body, a.body)
  const later = await api.create({ message: 'pay' }, ALICE, key)
  t.same(later.body, a.body, 'a later retry: the same record')
  t.equal(later.headers.get('idempotent-replayed'), 'true')
  t.equal(
    [a, b].filter((r) => r.headers.get('idempotent-replayed') === 'true').length,
    1,
    'one of the two ran, the other was replayed'
  )
  t.equal(model.on('/chat/completions').length, 1, 'one run only')

  const reused = await api.create({ message: 'pay twice' }, ALICE, key)
  t.equal(reused.status, 409)
  t.same(reused.body, {
    error: 'Idempotency-Key already used with a different request',
    code: 'PLT_ERR_IDEMPOTENCY_KEY_REUSED',
    hint: 'A retry resends the same body to the same route; a new request takes a new key'
  })
  const sameKeyOtherRoute = await api.call('POST', `/api/interactions/${a.body.id}/continue`, {
    token: ALICE,
    body: { message: 'pay' },
    headers: key
  })
  t.equal(sameKeyOtherRoute.status, 409, 'the route is part of the request')
  const k2 = { 'idempotency-key': 'order-43' }
  const first = await api.create({ message: 'ship', metadata: { a: 1, b: 2 } }, ALICE, k2)
  const reordered = await api.create({ metadata: { b: 2, a: 1 }, message: 'ship' }, ALICE, k2)
  t.equal(reordered.body.id, first.body.id, 'key order in the body does not matter')
  t.equal(model.on('/chat/completions').length, 2)

  const bobs = await api.create({ message: 'pay' }, BOB, key)
  t.not(bobs.body.id, a.body.id, 'keys are per principal')
  t.equal(model.on('/chat/completions').length, 3)

  for (const bad of ['has space', 'x'.repeat(256)]) {
    const r = await api.create({ message: 'pay' }, ALICE, { 'idempotency-key': bad })
    t.same([r.status, r.body.code], [400, 'PLT_ERR_IDEMPOTENCY_KEY_INVALID'])
  }
  t.equal(model.on('/chat/completions').length, 3, 'refused keys started nothing')

  t.test('background: the retry shows the first run as it is now', async (t) => {
    const k = { 'idempotency-key': 'bg-1' }
    const first = await api.create({ message: 'bg', background: true }, ALICE, k)
    t.equal(first.body.status, 'RUNNING')
    const done = await api.settled(first.body.id)
    const retry = await api.create({ message: 'bg', background: true }, ALICE, k)
    t.same(retry.body, done)
  })

  t.test('a first request refused by validation keeps no key', async (t) => {
    const k = { 'idempotency-key': 'fix-and-retry' }
    const bad = await api.create({ message: 'x', previousInteractionId: 'int-unknown' }, ALICE, k)
    t.equal(bad.status, 400)
    const good = await api.create({ message: 'x' }, ALICE, k)
    t.equal(good.status, 200, 'the corrected request runs')
  })
})

t.test('IdempotencyKeys stay bounded in count and age', async (t) => {
  let now = 0
  const keys = new IdempotencyKeys(2, 1000, () => now)
  let runs = 0
  const start = async (): Promise<Interaction> => ({ id: `int-${++runs}` }) as Interaction
  await keys.run('p', 'a', 'f', start)
  await keys.run('p', 'b', 'f', start)
  await keys.run('p', 'c', 'f', start)
  t.equal(keys.size, 2)
  t.equal((await keys.run('p', 'c', 'f', start)).id, 'int-3', 'a recent key is remembered')
  t.equal((await keys.run('p', 'a', 'f', start)).id, 'int-4', 'the oldest was forgotten')
  now = 5000
  t.equal((await keys.run('p', 'c', 'f', start)).id, 'int-5', 'an expired key runs again')
  t.equal(keys.size, 1, 'expired entries are dropped')
})

t.test('IdempotencyKeys keep no steps of a stored interaction, only of an unstored one', async (t) => {
  const keys = new IdempotencyKeys(10, 1000)
  const step = { seq: 0, type: 'text', text: 'x', toolName: null, data: {}, usage: null, createdAt: '' }
  const rec = (store: boolean) => async (): Promise<Interaction> =>
    ({ id: `int-${store}`, store, steps: [step] }) as Interaction
  t.equal((await keys.run('p', 'a', 'f', rec(true))).steps.length, 1, 'the first request gets the whole record')
  t.same((await keys.run('p', 'a', 'f', rec(true))).steps, [], 'a replay reads the store instead')
  await keys.run('p', 'b', 'f', rec(false))
  t.equal((await keys.run('p', 'b', 'f', rec(false))).steps.length, 1, 'store:false has no other copy')
})

t.test('list paging: limit, opaque cursor in X-Next-Cursor and Link, newest first', async (t) => {
  const tp = await startInteractions()
  t.teardown(tp.close)
  const { api } = tp
  const ids: string[] = []
  for (let i = 0; i < 7; i++) ids.push((await api.create({ message: `m${i}` })).body.id)
  await api.create({ message: 'not alice' }, BOB)
  const seen: string[] = []
  let path = '/api/interactions?limit=3'
  const pages: number[] = []
  for (;;) {
    const r = await api.call('GET', path, { token: ALICE })
    t.equal(r.status, 200)
    pages.push(r.body.length)
    seen.push(...r.body.map((x: any) => x.id))
    const cursor = r.headers.get('x-next-cursor')
    if (cursor === null) {
      t.equal(r.headers.get('link'), null, 'no Link on the last page')
      break
    }
    const link = r.headers.get('link')!
    t.match(link, /^<\/api\/interactions\?limit=3&cursor=[^>]+>; rel="next"$/)
    path = link.slice(1, link.indexOf('>'))
    t.equal(new URLSearchParams(path.split('?')[1]).get('cursor'), cursor)
  }
  t.same(pages, [3, 3, 1])
  t.same(seen, [...ids].reverse(), 'every item once, newest first')
  t.equal((await api.call('GET', '/api/interactions', { token: ALICE })).body.length, 7, 'default limit 50')
  t.equal((await api.call('GET', '/api/interactions?limit=100000', { token: ALICE })).body.length, 7, 'clamped to 500')
  for (const [q, name] of [
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=garbage', 'cursor'],
    ['conversationId=', 'conversationId']
  ]) {
    const r = await api.call('GET', `/api/interactions?${q}`, { token: ALICE })
    t.equal(r.status, 400, q)
    t.match(r.body, { code: 'PLT_ERR_INVALID_QUERY', error: new RegExp(`'${name}'`) })
  }
})
