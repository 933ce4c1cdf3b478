import t from 'tap'
import { PlatformError } from '../../runtime/contracts/index.js'
import { INTERACTION_ERRORS } from '../../runtime/interactions/errors.js'
import { IdempotencyKeys } from '../../runtime/interactions/idempotency.js'
import { MemoryInteractionStore } from '../../runtime/interactions/memory-store.js'
import { type IdempotencyClaim, type Interaction } from '../../runtime/interactions/types.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { ALICE, BOB, startInteractions } from './helpers.js'
import { header, step } from './store-contract.js'

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
  const keys = new IdempotencyKeys({
    store: new MemoryInteractionStore(),
    read: async () => undefined,
    maxKeys: 2,
    ttlMs: 1000,
    syncWaitMs: 0,
    now: () => now
  })
  let runs = 0
  // unstored interactions: only the process knows their keys
  const start = async (): Promise<Interaction> => ({ id: `int-${++runs}`, store: false }) as Interaction
  const id = async (key: string) => (await keys.run('p', key, 'f', start)).interaction.id
  await id('a')
  await id('b')
  await id('c')
  t.equal(keys.size, 2)
  t.equal(await id('c'), 'int-3', 'a recent key is remembered')
  t.equal(await id('a'), 'int-4', 'the oldest was forgotten')
  now = 5000
  t.equal(await id('c'), 'int-5', 'an expired key runs again')
  t.equal(keys.size, 1, 'expired entries are dropped')
})

t.test('IdempotencyKeys leave a stored interaction to the store; an unstored one stays in the process', async (t) => {
  const store = new MemoryInteractionStore()
  const keys = new IdempotencyKeys({
    store,
    read: async (_, id) => store.load(id),
    maxKeys: 10,
    ttlMs: 60_000,
    syncWaitMs: 0
  })
  let runs = 0
  const rec =
    (stored: boolean) =>
    async (claim: IdempotencyClaim): Promise<Interaction> => {
      const h = header(`int-${++runs}`, { store: stored, status: 'COMPLETED' })
      if (stored) {
        const held = await store.saveKeyed(h, claim, Date.now())
        if (held !== undefined)
          throw new PlatformError(INTERACTION_ERRORS.IDEMPOTENCY_KEY_HELD, {
            interactionId: held.interactionId,
            record: held
          })
      }
      return { ...h, steps: [step(0)] }
    }
  const first = await keys.run('alice', 'a', 'f', rec(true))
  t.same([first.replayed, first.interaction.steps.length], [false, 1], 'the first request gets the whole record')
  t.equal(keys.size, 0, 'the store holds the key from now on')
  const again = await keys.run('alice', 'a', 'f', rec(true))
  t.same([again.replayed, again.interaction.id, again.interaction.steps], [true, 'int-1', []], 'read from the store')
  await t.rejects(keys.run('alice', 'a', 'g', rec(true)), { code: 'PLT_ERR_IDEMPOTENCY_KEY_REUSED' })
  await keys.run('alice', 'b', 'f', rec(false))
  t.equal(keys.size, 1)
  const unstored = await keys.run('alice', 'b', 'f', rec(false))
  t.same([unstored.replayed, unstored.interaction.steps.length], [true, 1], 'store:false has no other copy')
  t.equal(runs, 2)
})

t.test('IdempotencyKeys of two processes on one store: one run, the other replays it', async (t) => {
  const store = new MemoryInteractionStore()
  const opts = { store, read: async (_: string, id: string) => store.load(id), maxKeys: 10, ttlMs: 60_000 }
  // each process's store lookup misses, then both claim: the store gives the key to one
  const [a, b] = [
    new IdempotencyKeys({ ...opts, syncWaitMs: 5000, pollMs: 5 }),
    new IdempotencyKeys({ ...opts, syncWaitMs: 5000, pollMs: 5 })
  ]
  let runs = 0
  const start = async (claim: IdempotencyClaim): Promise<Interaction> => {
    const h = header(`int-race-${++runs}`)
    const held = await store.saveKeyed(h, claim, Date.now())
    if (held !== undefined)
      throw new PlatformError(INTERACTION_ERRORS.IDEMPOTENCY_KEY_HELD, {
        interactionId: held.interactionId,
        record: held
      })
    // a synchronous run: the loser waits for its end
    setTimeout(() => void store.save({ ...h, status: 'COMPLETED', finalText: 'done' }), 50)
    return { ...h, status: 'COMPLETED', finalText: 'done', steps: [] }
  }
  const [ra, rb] = await Promise.all([a.run('alice', 'k', 'f', start), b.run('alice', 'k', 'f', start)])
  t.equal(runs, 2, 'both tried to claim')
  t.equal(ra.interaction.id, rb.interaction.id, 'one interaction')
  t.same([ra.replayed, rb.replayed].sort(), [false, true])
  t.equal((ra.replayed ? ra : rb).interaction.status, 'COMPLETED', 'the replay waited for the synchronous run to end')
  t.equal((await store.list({ userId: 'alice', limit: 10 })).items.length, 1, 'one record stored')
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
