import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GOVERNANCE } from '../../runtime/governance/index.js'
import type { Interaction } from '../../runtime/interactions/types.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { ALICE, startInteractions, type Reply } from './helpers.js'

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `fn` over `items` with at most `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    })
  )
  return out
}

t.test('1 000 concurrent background interactions on the demo runtime: none lost, no step lost or twice', async (t) => {
  const tp = await startInteractions({
    'platform.interactions.store': 'lmdb',
    'platform.interactions.text-coalesce-ms': 0,
    // one principal's 1 000 runs at once: the per-principal quota is not what this test is about
    'platform.interactions.quota.runs-in-flight': 0,
    'platform.interactions.quota.bytes-per-minute': 0
  })
  t.teardown(tp.close)
  const { api, service } = tp
  // a policy holds every turn at admission until all 1 000 exist, so they are truly in flight together
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  tp.platform.area(GOVERNANCE).setSource('hold', [
    {
      name: 'hold',
      source: 'code:hold',
      version: '1',
      className: 'TestPolicy',
      evaluate: async () => {
        await gate
        return { decision: 'admit' }
      }
    }
  ])
  const N = 1000
  const created = await pool([...Array(N).keys()], 64, (i) =>
    api.create({ message: `job ${i} with a few more words to stream`, background: true })
  )
  t.ok(
    created.every((r: Reply<Interaction>) => r.status === 200 && r.body.status === 'RUNNING'),
    'all accepted RUNNING'
  )
  t.equal(service.inFlight, N, 'all 1 000 in flight at once')
  release()
  const until = Date.now() + 120_000
  while (service.inFlight > 0 && Date.now() < until) await wait(50)
  t.equal(service.inFlight, 0, 'all ended')
  const done = await pool(created, 32, async (r) => (await api.get(r.body.id)).body)
  let bad = 0
  for (const [i, d] of done.entries()) {
    const expected = `You said: "job ${i} with a few more words to stream".`
    const seqs = d.steps.map((s) => s.seq)
    const ok =
      d.status === 'COMPLETED' &&
      d.finalText === expected &&
      seqs.every((s, k) => s === k) &&
      d.steps
        .filter((s) => s.type === 'text')
        .map((s) => s.text)
        .join('') === expected &&
      d.steps.filter((s) => s.type === 'completion').length === 1 &&
      d.steps[d.steps.length - 1]!.type === 'completion'
    if (!ok && bad++ < 3) t.fail(`interaction ${i}: ${JSON.stringify(d).slice(0, 400)}`)
  }
  t.equal(bad, 0, 'every interaction complete, seqs 0..n-1 without gap or repeat, text whole')
  const ids = new Set(done.map((d) => d.id))
  t.equal(ids.size, N, 'no two share an id')
  t.equal(service.feed.watched, 0, 'no feed subscription left behind')
})

t.test('a background run cut by a restart is FAILED `interrupted: server restarted`, its steps kept', async (t) => {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  const dataDir = mkdtempSync(join(tmpdir(), 'interactions-restart-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = {
    'platform.data-dir': dataDir,
    'platform.interactions.store': 'lmdb',
    'platform.interactions.text-coalesce-ms': 0,
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model'
  }
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'partial ' })], false), then: 'hang' })
  const first = await startInteractions(config)
  const r = await first.api.create({ message: 'long job', background: true })
  const id = r.body.id
  for (let i = 0; (await first.service.store.steps(id, -1)).length < 1; i++) {
    if (i > 300) throw new Error('no step arrived')
    await wait(10)
  }
  await first.close()

  const second = await startInteractions(config)
  t.teardown(second.close)
  const after = await second.api.get(id, ALICE)
  t.equal(after.status, 200)
  t.match(after.body, { status: 'FAILED', errorMessage: 'interrupted: server restarted' })
  t.same(
    after.body.steps.map((s) => [s.seq, s.type, s.text]),
    [
      [0, 'text', 'partial '],
      [1, 'error', 'interrupted: server restarted']
    ]
  )
  t.ok(
    second.logs.some((l) => /marked FAILED/.test(String(l.msg)) && l.interrupted === 1),
    'the start logged how many it marked'
  )
})
