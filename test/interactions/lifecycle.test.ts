import t from 'tap'
import { request } from 'node:http'
import { GOVERNANCE } from '../../runtime/governance/index.js'
import { type GovernancePolicy } from '../../runtime/contracts/index.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { ALICE, BOB, startInteractions } from './helpers.js'

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const words = (n: number): unknown[] => Array.from({ length: n }, (_, i) => deltaChunk({ content: `w${i} ` }))

t.test('lifecycle over the openai runtime', async (t) => {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  const tp = await startInteractions({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    'platform.interactions.text-coalesce-ms': 0,
    'platform.interactions.sync-timeout-ms': 400
  })
  t.teardown(tp.close)
  const { api, service } = tp

  t.test('background: RUNNING at once, persisted first; the client leaving changes nothing', async (t) => {
    model.chat = () => ({ stream: sseEvents([...words(10), usageChunk(4, 10)]), intervalMs: 15 })
    // a raw request whose socket is destroyed as soon as the answer arrives: the client is gone
    const first = await new Promise<any>((resolve, reject) => {
      const body = JSON.stringify({ message: 'go', background: true })
      const req = request(`${api.url}/api/interactions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' }
      })
      req.on('response', (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => {
          req.destroy()
          resolve(JSON.parse(text))
        })
      })
      req.on('error', reject)
      req.end(body)
    })
    t.match(first, { status: 'RUNNING', background: true, steps: [], finalText: null })
    const stored = await service.store.load(first.id)
    t.equal(stored?.status, 'RUNNING', 'the RUNNING record is in the store before the turn ends')
    const done = await api.settled(first.id)
    t.match(done, { status: 'COMPLETED', finalText: 'w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ' })
    t.same(
      done.steps.map((s) => s.type),
      [...Array(10).fill('text'), 'usage', 'completion'],
      'coalesce 0: one step per delta'
    )
    t.same(
      done.steps.map((s) => s.seq),
      [...Array(12).keys()]
    )
  })

  t.test('a synchronous turn whose client disconnects runs on to the end', async (t) => {
    model.chat = () => ({ stream: sseEvents([...words(5), usageChunk(1, 5)]), intervalMs: 40 })
    const req = request(`${api.url}/api/interactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' }
    })
    req.on('error', () => {})
    req.end(JSON.stringify({ message: 'sync then gone' }))
    // the newest record is this synchronous one once its run has started
    let header: any
    for (let i = 0; header?.background !== false; i++) {
      if (i > 300) throw new Error('the run never started')
      await wait(10)
      header = (await api.call('GET', '/api/interactions?limit=1', { token: ALICE })).body[0]
    }
    t.equal(header.status, 'RUNNING')
    req.destroy()
    t.match(await api.settled(header.id), { status: 'COMPLETED', finalText: 'w0 w1 w2 w3 w4 ' })
  })

  t.test('a synchronous turn past the timeout is FAILED `timed out after PT0.4S`', async (t) => {
    model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'slow ' })], false), then: 'hang' })
    const r = await api.create({ message: 'hang' })
    t.equal(r.status, 200)
    t.match(r.body, { status: 'FAILED', errorMessage: 'timed out after PT0.4S', finalText: null })
    t.same(
      r.body.steps.map((s) => [s.type, s.text, s.data]),
      [
        ['text', 'slow ', {}],
        ['error', 'timed out after PT0.4S', { code: 'timeout' }]
      ]
    )
    t.equal((await api.get(r.body.id)).body.status, 'FAILED', 'stored FAILED')
    await wait(50)
    t.equal(service.inFlight, 0, 'the run is gone from the registry')
  })

  t.test('cancel mid-run: CANCELLED, the steps so far kept, the model request aborted', async (t) => {
    const abandoned = model.abandoned
    model.chat = () => ({ stream: sseEvents(words(200)), intervalMs: 20 })
    const r = await api.create({ message: 'long', background: true })
    const id = r.body.id
    for (let i = 0; (await service.store.steps(id, -1)).length < 3; i++) {
      if (i > 200) throw new Error('no steps arrived')
      await wait(10)
    }
    t.equal((await api.call('POST', `/api/interactions/${id}/cancel`, { token: BOB })).status, 404, 'not the owner')
    const c = await api.call('POST', `/api/interactions/${id}/cancel`, { token: ALICE })
    t.same([c.status, c.body], [200, { status: 'cancel requested' }])
    const done = await api.settled(id)
    t.equal(done.status, 'CANCELLED')
    t.equal(done.errorMessage, 'cancelled by the client')
    const last = done.steps[done.steps.length - 1]!
    t.match(last, { type: 'error', text: 'cancelled by the client', data: { code: 'cancelled' } })
    const texts = done.steps.filter((s) => s.type === 'text')
    t.ok(texts.length >= 3 && texts.length < 200, `the ${texts.length} text steps before the cancel are kept`)
    t.equal(done.steps.filter((s) => s.type === 'error' || s.type === 'completion').length, 1, 'one terminal step')
    await wait(100)
    t.same((await api.get(id)).body.steps, done.steps, 'nothing is captured after the terminal step')
    t.equal(model.abandoned, abandoned + 1, 'the runtime dropped its request to the model')
    t.equal(
      (await api.call('POST', `/api/interactions/${id}/cancel`, { token: ALICE })).status,
      404,
      'no longer in flight'
    )
  })

  t.test('the feed: each step once, in order, published only once it is in the store; then the terminal', async (t) => {
    model.chat = () => ({ stream: sseEvents([...words(30), usageChunk(3, 30)]), intervalMs: 2 })
    const r = await api.create({ message: 'watch', background: true })
    const id = r.body.id
    const seen: number[] = []
    let durableAtPublish = true
    const terminal = new Promise<any>((resolve) => {
      service.feed.subscribe(id, {
        onStep: (step) => {
          seen.push(step.seq)
          // read at publish time: the store must already hold the step the feed announces
          void service.store.steps(id, step.seq - 1, 1).then((s) => {
            if (s[0]?.seq !== step.seq) durableAtPublish = false
          })
        },
        onTerminal: resolve
      })
    })
    const end = await terminal
    t.match(end, { id, status: 'COMPLETED', finalText: /^w0 w1 .* w29 $/ })
    const stored = (await api.get(id)).body.steps.map((s) => s.seq)
    t.same(seen, stored, 'every stored step reached the subscriber once, in seq order')
    t.ok(durableAtPublish, 'no step was published before the store had it')
    t.equal(service.feed.watched, 0, 'the terminal ends the subscription')
  })

  t.test('delete of a running interaction stops it; nothing is written after', async (t) => {
    model.chat = () => ({ stream: sseEvents(words(200)), intervalMs: 20 })
    const r = await api.create({ message: 'doomed', background: true })
    const id = r.body.id
    const ended = new Promise<any>((resolve) => service.feed.subscribe(id, { onStep: () => {}, onTerminal: resolve }))
    for (let i = 0; (await service.store.steps(id, -1)).length < 2; i++) {
      if (i > 200) throw new Error('no steps arrived')
      await wait(10)
    }
    const d = await api.call('DELETE', `/api/interactions/${id}`, { token: ALICE })
    t.same([d.status, d.body], [200, { deleted: id }])
    t.match(await ended, { id, status: 'CANCELLED', errorMessage: 'deleted' }, 'live viewers learn the end')
    await wait(150)
    t.equal(await service.store.load(id), undefined, 'no record')
    t.same(await service.store.steps(id, -1), [], 'no step written after the delete')
    t.equal(service.inFlight, 0)
    t.notOk(
      tp.logs.some((l) => l.interaction === id),
      'no failed write logged'
    )
  })

  t.test('a turn the governance plane denies is FAILED with the policy reason', async (t) => {
    const gov = tp.platform.area(GOVERNANCE)
    const deny: GovernancePolicy = {
      name: 'no-cake',
      source: 'code:no-cake',
      version: '1',
      className: 'TestPolicy',
      evaluate: (c) =>
        /cake/.test(c.request.message) ? { decision: 'deny', reason: 'no cake talk' } : { decision: 'admit' }
    }
    gov.setSource('t', [deny])
    t.teardown(() => gov.removeSource('t'))
    model.reset()
    const r = await api.create({ message: 'bake a cake' })
    t.match(r.body, { status: 'FAILED', errorMessage: 'denied by policy no-cake: no cake talk', finalText: null })
    t.same(
      r.body.steps.map((s) => [s.type, s.text, s.data]),
      [['error', 'denied by policy no-cake: no cake talk', { code: 'denied', policy: 'no-cake' }]]
    )
    t.equal(model.calls.length, 0, 'the model never ran')
  })

  t.test('a model error is FAILED with its message and code', async (t) => {
    model.chat = () => ({ status: 500, json: { error: { message: 'boom' } } })
    const r = await api.create({ message: 'x' })
    t.match(r.body, { status: 'FAILED', errorMessage: /runtime 'openai'/ })
    t.match(r.body.steps, [{ type: 'error', data: { code: 'runtime' } }])
  })
})
