import t, { type Test } from 'tap'
import type OpenAI from 'openai'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { client, failure, startOpenAi } from './helpers.js'

// What the OpenAI-compatible API reads back from the interaction store, on each of the three
// stores: one platform per store, one throwaway Postgres for the file, one fake model server
// answering every turn (so usage comes from the model server end to end).
const server = await new OpenAiServer().start()
t.teardown(() => server.close())
const answer = (): ReturnType<OpenAiServer['chat']> => ({
  stream: sseEvents([deltaChunk({ content: 'Hello' }), deltaChunk({ content: ' world' }, 'stop'), usageChunk(5, 2)])
})
server.chat = answer

/**
 * The model server's next reply streams `Working`, then waits for `release()` before ` done`:
 * a run held in flight while the test reads, resumes and cancels it.
 */
function holdNext(t: Test): () => void {
  let release = (): void => undefined
  const until = new Promise<void>((resolve) => (release = resolve))
  server.chat = () => {
    server.chat = answer
    return {
      stream: sseEvents([
        deltaChunk({ content: 'Working' }),
        deltaChunk({ content: ' done' }, 'stop'),
        usageChunk(4, 2)
      ]),
      pauseAt: { index: 1, until }
    }
  }
  t.teardown(() => {
    server.chat = answer
    release()
  })
  return release
}

type Event = OpenAI.Responses.ResponseStreamEvent

/** Reads events from `it` until one of type `type` (included). */
async function until(it: AsyncIterator<Event>, type: string): Promise<Event[]> {
  const out: Event[] = []
  for (;;) {
    const n = await it.next()
    if (n.done === true) throw new Error(`the stream ended before ${type}`)
    out.push(n.value)
    if (n.value.type === type) return out
  }
}

const pg = await testPostgres(t)
const stores: [string, () => Promise<Record<string, unknown>>][] = [
  ['memory', async () => ({ 'platform.interactions.store': 'memory' })],
  ['lmdb', async () => ({ 'platform.interactions.store': 'lmdb' })]
]
if (pg !== undefined)
  stores.push([
    'postgres',
    async () => ({
      'platform.interactions.store': 'postgres',
      'platform.interactions.postgres.url': await pg.database(t)
    })
  ])

for (const [store, config] of stores)
  t.test(`${store} store`, async (t) => {
    const tp = await startOpenAi({
      ...(await config()),
      'platform.ai.runtime': 'openai',
      'platform.ai.openai.base-url': server.url,
      'platform.ai.openai.model': 'test-model'
    })
    t.teardown(tp.close)
    const alice = client(tp)

    t.test('create, retrieve, previous_response_id, input_items, delete', async (t) => {
      const r = await alice.responses.create({
        model: 'demo',
        input: [
          { role: 'user', content: 'one' },
          { role: 'assistant', content: 'two' },
          { role: 'user', content: 'three' }
        ],
        metadata: { store }
      })
      t.match(r, { status: 'completed', output_text: 'Hello world', usage: { input_tokens: 5, output_tokens: 2 } })
      const got = await alice.responses.retrieve(r.id)
      t.match(got, { id: r.id, status: 'completed', output_text: 'Hello world', usage: { total_tokens: 7 } })
      t.same(got.output, r.output, 'the stored output is the answered one')
      const items = await alice.responses.inputItems.list(r.id, { order: 'asc' })
      t.same(
        items.data.map((i: any) => [i.role, i.content[0].text]),
        [
          ['user', 'one'],
          ['assistant', 'two'],
          ['user', 'three']
        ]
      )
      server.reset()
      const next = await alice.responses.create({ model: 'demo', input: 'four', previous_response_id: r.id })
      t.match(next, { status: 'completed', previous_response_id: r.id })
      t.match(
        server.on('/chat/completions')[0].messages.slice(-3),
        [
          { role: 'user', content: 'three' },
          { role: 'assistant', content: 'Hello world' },
          { role: 'user', content: 'four' }
        ],
        "the stored turn is the continuation's history"
      )
      t.match(await alice.responses.delete(r.id), { id: r.id, deleted: true })
      t.match(await failure(alice.responses.retrieve(r.id)), { status: 404 })
      t.match(await failure(alice.responses.inputItems.list(r.id)), { status: 404 })
    })

    t.test('background: answers at once, completes in the store', async (t) => {
      const release = holdNext(t)
      const r = await alice.responses.create({ model: 'demo', input: 'later', background: true })
      t.match(r, { background: true, status: /^(queued|in_progress)$/ })
      t.equal((await alice.responses.retrieve(r.id)).status, 'in_progress', 'held: still running')
      // the stream of a background response ends with its terminal event, so it waits for the run
      const live = (await alice.responses.retrieve(r.id, { stream: true }))[Symbol.asyncIterator]()
      await until(live, 'response.output_text.delta')
      release()
      await until(live, 'response.completed')
      t.match(await alice.responses.retrieve(r.id), { status: 'completed', output_text: 'Working done' })
    })

    t.test('a stream resumed with starting_after: the stored events after it, then the live rest', async (t) => {
      const release = holdNext(t)
      const first = (await alice.responses.create({ model: 'demo', input: 'resume me', stream: true }))[
        Symbol.asyncIterator
      ]()
      const head = await until(first, 'response.output_text.delta')
      const id = (head[0] as OpenAI.Responses.ResponseCreatedEvent).response.id
      const delta = head.at(-1)!.sequence_number
      // a second client lost the stream after the event before the first delta
      const resumed = (await alice.responses.retrieve(id, { stream: true, starting_after: delta - 1 }))[
        Symbol.asyncIterator
      ]()
      const replayed = await until(resumed, 'response.output_text.delta')
      t.same(replayed, [head.at(-1)], 'the stored delta is replayed, nothing before it')
      release()
      const rest = await until(first, 'response.completed')
      t.same(await until(resumed, 'response.completed'), rest, 'then the same live events')
      t.same(
        [...head, ...rest].map((e) => e.sequence_number),
        [...head, ...rest].map((_, i) => i)
      )
      // once completed, the whole stream is rebuilt from the store
      const again: Event[] = []
      for await (const e of await alice.responses.retrieve(id, { stream: true, starting_after: 0 })) again.push(e)
      t.same(again, [...head, ...rest].slice(1))
    })

    t.test('cancel: a background response in flight ends cancelled, and stays so', async (t) => {
      holdNext(t)
      const r = await alice.responses.create({ model: 'demo', input: 'stop me', background: true })
      const live = (await alice.responses.retrieve(r.id, { stream: true }))[Symbol.asyncIterator]()
      await until(live, 'response.output_text.delta')
      const cancelled = await alice.responses.cancel(r.id)
      t.match(cancelled, { id: r.id, status: 'cancelled' })
      const end = (await until(live, 'response.failed')).at(-1) as OpenAI.Responses.ResponseFailedEvent
      t.equal(end.response.status, 'cancelled', 'the live stream ends with it')
      t.equal((await alice.responses.retrieve(r.id)).status, 'cancelled')
      t.match(await failure(alice.responses.cancel(r.id)), { status: 400 }, 'only once')
    })
  })
