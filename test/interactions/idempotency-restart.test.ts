import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { ALICE, startInteractions, type Reply } from './helpers.js'

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const REPLAYED = 'idempotent-replayed'

async function modelServer(t: Test): Promise<OpenAiServer> {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'paid' }, 'stop')]), intervalMs: 40 })
  return model
}

const openai = (model: OpenAiServer) => ({
  'platform.ai.runtime': 'openai',
  'platform.ai.openai.base-url': model.url,
  'platform.ai.openai.model': 'test-model'
})

t.test('LMDB: a retry after a restart replays the first interaction; another body is 409', async (t) => {
  const model = await modelServer(t)
  const dataDir = mkdtempSync(join(tmpdir(), 'interactions-idem-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = {
    ...openai(model),
    'platform.data-dir': dataDir,
    'platform.interactions.store': 'lmdb',
    // each delta its own step, so the cut run has one stored before the restart
    'platform.interactions.text-coalesce-ms': 0
  }
  const key = { 'idempotency-key': 'order-42' }

  const first = await startInteractions(config)
  let firstOpen = true
  t.teardown(() => (firstOpen ? first.close() : undefined))
  const made = await first.api.create({ message: 'pay', metadata: { a: 1, b: 2 } }, ALICE, key)
  t.match(made.body, { status: 'COMPLETED', finalText: 'paid' })
  t.equal(made.headers.get(REPLAYED), null, 'the first request ran')
  const chained = await first.api.call('POST', `/api/interactions/${made.body.id}/continue`, {
    token: ALICE,
    body: { message: 'and ship' },
    headers: { 'idempotency-key': 'ship-1' }
  })
  t.equal(chained.status, 200)
  // a background run the restart cuts: its key still names it
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'partial ' })], false), then: 'hang' })
  const cut = await first.api.create({ message: 'long', background: true }, ALICE, { 'idempotency-key': 'long-1' })
  for (let i = 0; (await first.service.store.steps(cut.body.id, -1)).length < 1; i++) {
    if (i > 300) throw new Error('no step arrived')
    await wait(10)
  }
  firstOpen = false
  await first.close()
  t.equal(model.on('/chat/completions').length, 3)

  const second = await startInteractions(config)
  t.teardown(second.close)
  const { api } = second
  const retry = await api.create({ metadata: { b: 2, a: 1 }, message: 'pay' }, ALICE, key)
  t.equal(retry.status, 200)
  t.equal(retry.headers.get(REPLAYED), 'true')
  t.same(retry.body, made.body, 'the same interaction, as it was')
  const chainedRetry = await api.call('POST', `/api/interactions/${made.body.id}/continue`, {
    token: ALICE,
    body: { message: 'and ship' },
    headers: { 'idempotency-key': 'ship-1' }
  })
  t.same([chainedRetry.body.id, chainedRetry.headers.get(REPLAYED)], [chained.body.id, 'true'], 'continue too')
  const cutRetry = await api.create({ message: 'long', background: true }, ALICE, { 'idempotency-key': 'long-1' })
  t.same(
    [cutRetry.body.id, cutRetry.body.status, cutRetry.body.errorMessage, cutRetry.headers.get(REPLAYED)],
    [cut.body.id, 'FAILED', 'interrupted: server restarted', 'true'],
    'a run the restart cut is replayed as it ended: a new run takes a new key'
  )
  t.equal(model.on('/chat/completions').length, 3, 'no second run')

  const other = await api.create({ message: 'pay twice' }, ALICE, key)
  t.same([other.status, other.body.code], [409, 'PLT_ERR_IDEMPOTENCY_KEY_REUSED'], 'another body: 409')
  const list = await api.call('GET', '/api/interactions', { token: ALICE })
  t.equal(list.body.length, 3, 'nothing was added')

  const gone = await api.call('DELETE', `/api/interactions/${made.body.id}`, { token: ALICE })
  t.equal(gone.status, 200)
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'again' }, 'stop')]) })
  const afresh = await api.create({ message: 'pay', metadata: { a: 1, b: 2 } }, ALICE, key)
  t.same(
    [afresh.status, afresh.headers.get(REPLAYED), afresh.body.finalText],
    [200, null, 'again'],
    'a deleted interaction took its key with it'
  )
  t.not(afresh.body.id, made.body.id)
})

t.test('Postgres: two platforms on one database racing one key start one run', async (t) => {
  const pg = await testPostgres(t)
  if (pg === undefined) return
  const model = await modelServer(t)
  const url = await pg.database(t)
  const config = {
    ...openai(model),
    'platform.interactions.store': 'postgres',
    'platform.interactions.postgres.url': url
  }
  const a = await startInteractions(config)
  let aOpen = true
  t.teardown(() => (aOpen ? a.close() : undefined))
  const b = await startInteractions(config)
  t.teardown(b.close)

  const rounds = 6
  for (let i = 0; i < rounds; i++) {
    const key = { 'idempotency-key': `race-${i}` }
    const body = { message: `pay ${i}`, background: i % 2 === 1 }
    const [ra, rb] = await Promise.all([a.api.create(body, ALICE, key), b.api.create(body, ALICE, key)])
    t.same([ra.status, rb.status], [200, 200], `round ${i}: both answered`)
    t.equal(ra.body.id, rb.body.id, `round ${i}: one interaction`)
    t.equal(
      [ra, rb].filter((r: Reply) => r.headers.get(REPLAYED) === 'true').length,
      1,
      `round ${i}: one ran, the other was replayed`
    )
    if (!body.background)
      t.same(
        [ra.body.status, rb.body.status, rb.body.finalText],
        ['COMPLETED', 'COMPLETED', 'paid'],
        `round ${i}: the replay waited for the synchronous run in the other process`
      )
    else await a.api.settled(ra.body.id)
  }
  t.equal(model.on('/chat/completions').length, rounds, 'one model call per key')
  const listed = await a.api.call('GET', '/api/interactions', { token: ALICE })
  t.equal(listed.body.length, rounds, 'one interaction per key')

  const other = await b.api.create({ message: 'pay 0 twice' }, ALICE, { 'idempotency-key': 'race-0' })
  t.same([other.status, other.body.code], [409, 'PLT_ERR_IDEMPOTENCY_KEY_REUSED'], 'another body: 409')

  // and across a restart of one of them
  aOpen = false
  await a.close()
  const c = await startInteractions(config)
  t.teardown(c.close)
  const again = await c.api.create({ message: 'pay 0', background: false }, ALICE, { 'idempotency-key': 'race-0' })
  t.same([again.body.id, again.headers.get(REPLAYED)], [listed.body.at(-1).id, 'true'], 'replayed after the restart')
  t.equal(model.on('/chat/completions').length, rounds, 'still one model call per key')
})
