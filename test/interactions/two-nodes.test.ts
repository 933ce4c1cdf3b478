import t, { type Test } from 'tap'
import { Client } from 'pg'
import { TERMINAL_STATUSES, type InteractionHeader } from '../../runtime/interactions/types.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { startInteractions, type Answer } from './helpers.js'

/** A model that streams `deltas` text deltas, holding after the first `pause` until `release()`. */
async function heldModel(
  t: Test,
  deltas: number,
  pause: number
): Promise<{ model: OpenAiServer; release: () => void }> {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  model.chat = () => ({
    stream: sseEvents([
      ...Array.from({ length: deltas }, (_, i) => deltaChunk({ content: `d${i} ` })),
      deltaChunk({}, 'stop')
    ]),
    pauseAt: { index: pause, until: held }
  })
  return { model, release }
}

// Two platform processes on one Postgres database, the second started while the first has a
// background run in flight: the second must not mark that run interrupted, and the run must end
// once, with one terminal step, as its own node ends it.
t.test('a run whose end another node wrote stops: no step after it, viewers get the stored end', async (t) => {
  const { model, release } = await heldModel(t, 20, 5)
  const tp = await startInteractions({
    'platform.interactions.store': 'memory',
    'platform.interactions.text-coalesce-ms': 0,
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model'
  })
  t.teardown(tp.close)
  const { service } = tp
  const id = (await tp.api.create({ message: 'long job', background: true })).body.id
  while ((await service.store.steps(id, -1)).length < 5) await new Promise((r) => setTimeout(r, 20))
  const terminals: InteractionHeader[] = []
  service.feed.subscribe(id, { onStep: () => {}, onTerminal: (h) => terminals.push(h) })
  // what another node's writes leave in the shared store: its terminal step, then its header
  const stored = (await service.store.load(id))!
  const at = new Date().toISOString()
  await service.store.appendStep(id, {
    seq: 500,
    type: 'error',
    text: 'ended elsewhere',
    toolName: null,
    data: { code: 'interrupted' },
    usage: null,
    createdAt: at
  })
  await service.store.save({ ...stored, status: 'FAILED', errorMessage: 'ended elsewhere', updatedAt: at })
  release()
  while (service.inFlight > 0) await new Promise((r) => setTimeout(r, 20))
  const got = (await tp.api.get(id)).body
  t.match(got, { status: 'FAILED', errorMessage: 'ended elsewhere' }, 'the stored end stands')
  t.same(
    got.steps.filter((s) => s.type === 'completion' || s.type === 'error').map((s) => s.seq),
    [500],
    'one terminal step: the run wrote none of its own'
  )
  t.equal(got.steps.at(-1)!.seq, 500, 'no step after it')
  t.same(
    terminals.map((h) => [h.status, h.errorMessage]),
    [['FAILED', 'ended elsewhere']],
    'live viewers get the end that the store holds, once'
  )
})

const pg = await testPostgres(t)

if (pg !== undefined)
  t.test('a node started beside a live one leaves its run alone; the run ends once', async (t) => {
    const url = await pg.database(t)
    // the stream stops after 10 deltas until the second node is up: the run is in flight then
    const { model, release } = await heldModel(t, 30, 10)
    const config = {
      'platform.interactions.store': 'postgres',
      'platform.postgres.url': url,
      'platform.interactions.text-coalesce-ms': 0,
      'platform.ai.runtime': 'openai',
      'platform.ai.openai.base-url': model.url,
      'platform.ai.openai.model': 'test-model'
    }
    const first = await startInteractions(config)
    t.teardown(first.close)
    const created = await first.api.create({ message: 'long job', background: true })
    t.equal(created.body.status, 'RUNNING')
    const id = created.body.id
    // the first steps are stored before the second node starts
    while ((await first.service.store.steps(id, -1)).length < 10) await new Promise((r) => setTimeout(r, 20))

    const second = await startInteractions(config)
    t.teardown(second.close)
    t.not(second.platform.node.id, first.platform.node.id, 'two data directories, two node ids')
    const seen = await second.api.get(id)
    t.equal(seen.body.status, 'RUNNING', 'the second node did not mark the first node’s run interrupted')
    t.equal(seen.body.errorMessage, null)

    release()
    let ended: Answer
    for (;;) {
      ended = (await second.api.get(id)).body
      if (TERMINAL_STATUSES.has(ended.status)) break
      await new Promise((r) => setTimeout(r, 20))
    }
    t.equal(ended.status, 'COMPLETED', 'the run ends as its own node ends it')
    const terminal = ended.steps.filter((s) => s.type === 'completion' || s.type === 'error')
    t.same(
      terminal.map((s) => s.type),
      ['completion'],
      'exactly one terminal step'
    )
    t.equal(ended.steps.at(-1)!.type, 'completion', 'nothing after it')
    t.same(
      ended.steps.map((s) => s.seq),
      ended.steps.map((_, i) => i),
      'seqs without gap'
    )

    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const owner = await c.query('SELECT owner_node FROM platform_interactions WHERE id = $1', [id])
    t.same(owner.rows, [{ owner_node: first.platform.node.id }], 'the run is recorded as the first node’s')
  })
