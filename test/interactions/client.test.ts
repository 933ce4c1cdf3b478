import t from 'tap'
import WebSocket from 'ws'
import { PlatformApiError, PlatformClient, type StreamFrame } from '../../sdk/client.js'
import { ALICE, BOB } from './helpers.js'
import { range, startStreaming } from './stream-helpers.js'

async function collect(it: AsyncIterable<StreamFrame>): Promise<{ seqs: number[]; last: StreamFrame | undefined }> {
  const seqs: number[] = []
  let last: StreamFrame | undefined
  for await (const f of it) {
    if (f.type === 'interaction-step') seqs.push(f.step.seq)
    last = f
  }
  return { seqs, last }
}

t.test('uws-agent-platform/client against a served platform', async (t) => {
  const tp = await startStreaming(30, 5)
  t.teardown(tp.close)
  const alice = new PlatformClient({ baseUrl: tp.url, token: ALICE })
  const bob = new PlatformClient({ baseUrl: tp.url, token: BOB })

  t.test('create, continue, get, list, cancel, delete', async (t) => {
    const first = await alice.create({ message: 'hello' })
    t.equal(first.status, 'COMPLETED')
    t.equal(first.userId, 'alice')
    const next = await alice.continue(first.id, { message: 'again' })
    t.equal(next.parentId, first.id)
    t.equal(next.conversationId, first.conversationId)
    t.same((await alice.get(first.id)).steps, first.steps)
    const page = await alice.list({ conversationId: first.conversationId, limit: 1 })
    t.same(
      page.items.map((i) => i.id),
      [next.id],
      'newest first, one per page'
    )
    t.type(page.nextCursor, 'string')
    const rest = await alice.list({ conversationId: first.conversationId, limit: 1, cursor: page.nextCursor! })
    t.same(
      rest.items.map((i) => i.id),
      [first.id]
    )
    t.equal(rest.nextCursor, undefined, 'the last page has no cursor')
    const again = await alice.create({ message: 'once' }, { idempotencyKey: 'k-1' })
    t.equal((await alice.create({ message: 'once' }, { idempotencyKey: 'k-1' })).id, again.id, 'Idempotency-Key')
    const bg = await alice.create({ message: 'long', background: true })
    t.equal(bg.status, 'RUNNING')
    t.same(await alice.cancel(bg.id), { status: 'cancel requested' })
    const done = await collect(alice.stream(bg.id))
    t.equal(done.last?.type, 'interaction-terminal')
    t.equal((await alice.get(bg.id)).status, (done.last as any).status)
    await alice.delete(first.id)
    const gone = await alice.get(first.id).catch((e: unknown) => e)
    t.ok(gone instanceof PlatformApiError)
    t.equal((gone as PlatformApiError).status, 404)
    t.equal((gone as PlatformApiError).code, 'PLT_ERR_INTERACTION_NOT_FOUND')
  })

  t.test('refusals throw PlatformApiError with the catalogue code', async (t) => {
    const mine = await alice.create({ message: 'mine' })
    const notMine = await bob.get(mine.id).catch((e: unknown) => e)
    t.match(notMine, { status: 404, code: 'PLT_ERR_INTERACTION_NOT_FOUND' })
    const blank = await alice.create({ message: '  ' }).catch((e: unknown) => e)
    t.match(blank, { status: 400 })
    t.throws(() => new PlatformClient({} as any), TypeError)
    for (const transport of ['websocket', 'sse'] as const) {
      const refused = await collect(bob.stream(mine.id, { transport })).catch((e: unknown) => e)
      t.match(refused, { status: 404, code: 'PLT_ERR_INTERACTION_NOT_FOUND' }, `${transport}: not owned`)
      const unknown = await collect(alice.stream('int-nope', { transport })).catch((e: unknown) => e)
      t.match(unknown, { status: 404, code: 'PLT_ERR_INTERACTION_NOT_FOUND' }, `${transport}: unknown`)
    }
  })

  t.test('stream over WebSocket (the ws package in Node) and SSE, from the start and after a seq', async (t) => {
    const run = await alice.create({ message: 'stream me', background: true })
    const [ws, sse] = await Promise.all([
      collect(alice.stream(run.id, { transport: 'websocket' })),
      collect(alice.stream(run.id, { transport: 'sse' }))
    ])
    const final = await alice.get(run.id)
    t.equal(final.status, 'COMPLETED')
    const all = range(0, final.steps.length - 1)
    t.same(ws.seqs, all, 'websocket: every seq once')
    t.same(sse.seqs, all, 'sse: every seq once')
    t.same(ws.last, {
      type: 'interaction-terminal',
      id: run.id,
      status: 'COMPLETED',
      finalText: final.finalText,
      errorMessage: null
    })
    t.same(sse.last, ws.last)
    const later = await collect(alice.stream(run.id, { after: 20 }))
    t.same(later.seqs, range(21, final.steps.length - 1), 'after: only what follows')
  })

  t.test('SSE when WebSocket fails before it ever opens', async (t) => {
    let attempts = 0
    // a WebSocket that cannot connect (a proxy that refuses upgrades, say)
    class Refused extends WebSocket {
      constructor(_url: string, opts: unknown) {
        attempts++
        super('ws://127.0.0.1:9/', opts as WebSocket.ClientOptions)
      }
    }
    const client = new PlatformClient({ baseUrl: tp.url, token: ALICE, WebSocket: Refused })
    const run = await alice.create({ message: 'fallback' })
    const got = await collect(client.stream(run.id))
    t.same(got.seqs, range(0, run.steps.length - 1))
    t.equal(got.last?.type, 'interaction-terminal')
    t.equal(attempts, 1, 'one failed WebSocket attempt, then SSE')
  })

  t.test("a browser's global WebSocket: no headers, so the token goes in the query", async (t) => {
    const urls: string[] = []
    // the browser constructor: (url, protocols), nothing to set headers with
    class BrowserWebSocket extends WebSocket {
      constructor(url: string) {
        urls.push(url)
        super(url)
      }
    }
    ;(globalThis as any).WebSocket = BrowserWebSocket
    t.teardown(() => {
      delete (globalThis as any).WebSocket
    })
    const run = await alice.create({ message: 'from a browser' })
    const got = await collect(new PlatformClient({ baseUrl: tp.url, token: ALICE }).stream(run.id))
    t.same(got.seqs, range(0, run.steps.length - 1))
    t.equal(got.last?.type, 'interaction-terminal')
    t.equal(urls.length, 1, 'over the global WebSocket')
    t.match(urls[0], `access_token=${ALICE}`)
    const refused = await collect(new PlatformClient({ baseUrl: tp.url }).stream(run.id)).catch((e: unknown) => e)
    t.match(refused, { status: 404 }, 'without a token: WebSocket refused, SSE tells why')
  })

  t.test('breaking out of the loop closes the connection', async (t) => {
    const run = await alice.create({ message: 'early', background: true })
    for await (const f of alice.stream(run.id)) {
      t.equal(f.type, 'interaction-step')
      break
    }
    await tp.api.settled(run.id)
    const until = Date.now() + 5000
    while (tp.service.feed.watched > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
    t.equal(tp.service.feed.watched, 0, 'no subscription left behind')
  })
})
