import t, { type Test } from 'tap'
import type { InteractionStep } from '../../runtime/interactions/index.js'
import { testPostgres } from '../helpers/postgres.js'
import { startStreaming } from './stream-helpers.js'
import { UNACKNOWLEDGED_STEPS } from '../../runtime/interactions/run-publication.js'

/**
 * Starts a background run and watches its feed: the seqs seen, those seen before `acked` held
 * them (-1: the terminal came before every step was acknowledged), and the terminal header.
 */
async function watched(
  tp: Awaited<ReturnType<typeof startStreaming>>,
  acked: ReadonlySet<number>
): Promise<{ id: string; seen: number[]; early: number[]; terminal: Promise<any> }> {
  const r = await tp.api.create({ message: 'go', background: true })
  const id: string = r.body.id
  const seen: number[] = []
  const early: number[] = []
  const terminal = new Promise<any>((resolve) => {
    tp.service.feed.subscribe(id, {
      onStep: (step) => {
        seen.push(step.seq)
        if (!acked.has(step.seq)) early.push(step.seq)
      },
      onTerminal: (h) => {
        if (acked.size !== seen.length) early.push(-1)
        resolve(h)
      }
    })
  })
  return { id, seen, early, terminal }
}

/**
 * A run does not wait for each step's commit before appending the next (lmdb-js batches the puts
 * in flight into one transaction), yet the feed still gets every step once, in seq order, and only
 * after the store acknowledged it; the terminal comes after them all. Nor does it run ahead of
 * the store: a runtime that emits every delta at once is read at the pace of the acknowledgements.
 */
async function pipelined(t: Test, overrides: Record<string, unknown>): Promise<void> {
  // 300 deltas written at once: the capture emits many steps in one tick
  const tp = await startStreaming(300, 0, overrides)
  t.teardown(tp.close)
  const { api, service } = tp
  const store = service.store
  const append = store.appendStep.bind(store)
  const acked = new Set<number>()
  let inFlight = 0
  let maxInFlight = 0
  // a spy around the real store: it counts appends not yet acknowledged
  store.appendStep = async (id: string, step: InteractionStep): Promise<void> => {
    maxInFlight = Math.max(maxInFlight, ++inFlight)
    try {
      await append(id, step)
      acked.add(step.seq)
    } finally {
      inFlight--
    }
  }
  t.teardown(() => {
    store.appendStep = append
  })
  const { id, seen, early, terminal } = await watched(tp, acked)
  t.match(await terminal, { id, status: 'COMPLETED' })
  const stored = (await api.get(id)).body.steps.map((s) => s.seq)
  t.ok(stored.length > 300, `${stored.length} steps stored`)
  t.same(stored, [...stored.keys()], 'stored seqs 0..n-1, no gap')
  t.same(seen, stored, 'the feed saw every step once, in seq order')
  t.same(early, [], 'no step (nor the terminal) was published before the store acknowledged it')
  t.ok(maxInFlight > 1, `appends overlap instead of waiting for each commit (at most ${maxInFlight} in flight)`)
  // the turn is paced by the store: UNACKNOWLEDGED_STEPS, plus the steps one event makes (a flushed
  // text and the step after it)
  t.ok(maxInFlight <= UNACKNOWLEDGED_STEPS + 2, `a run keeps at most a few appends unacknowledged (${maxInFlight})`)
}

t.test('lmdb: appends overlap; the feed stays in order and behind the acks', (t) =>
  pipelined(t, { 'platform.interactions.store': 'lmdb' })
)

t.test('postgres: the same, its inserts of one interaction kept in order', async (t) => {
  const pg = await testPostgres(t)
  if (pg === undefined) return
  const url = await pg.database(t)
  await pipelined(t, { 'platform.interactions.store': 'postgres', 'platform.interactions.postgres.url': url })
})

/**
 * A store that answers several appends with one promise (a group commit): the run reacts once per
 * answer, yet marks and publishes every step it holds, in order, none before the answer.
 */
t.test('lmdb: steps sharing one answer are each published once, in order, after it', async (t) => {
  const tp = await startStreaming(300, 0, { 'platform.interactions.store': 'lmdb' })
  t.teardown(tp.close)
  const { api, service } = tp
  const store = service.store
  const append = store.appendStep.bind(store)
  const acked = new Set<number>()
  type Group = { seqs: number[]; stored: Promise<void>[]; answer: Promise<void> }
  let group: Group | undefined
  let largest = 0
  // one answer for every append of a few milliseconds, once each of them is stored (not of one
  // event-loop turn: how many steps a loop turn holds depends on what else the process writes)
  const open = (): Group => {
    const g: Group = { seqs: [], stored: [], answer: Promise.resolve() }
    g.answer = new Promise<void>((resolve, reject) =>
      setTimeout(() => {
        group = undefined
        largest = Math.max(largest, g.seqs.length)
        Promise.all(g.stored).then(() => {
          for (const s of g.seqs) acked.add(s)
          resolve()
        }, reject)
      }, 5)
    )
    return g
  }
  store.appendStep = (id: string, step: InteractionStep): Promise<void> => {
    group ??= open()
    group.seqs.push(step.seq)
    group.stored.push(append(id, step))
    return group.answer
  }
  t.teardown(() => {
    store.appendStep = append
  })
  const { id, seen, early, terminal } = await watched(tp, acked)
  t.match(await terminal, { id, status: 'COMPLETED' })
  const stored = (await api.get(id)).body.steps.map((s) => s.seq)
  t.same(seen, stored, 'the feed saw each step once, in seq order')
  t.same(early, [], 'no step was published before its shared answer')
  t.ok(largest > 1, `appends shared an answer (up to ${largest})`)
})

t.test('lmdb: a refused shared answer withholds its steps only; the run goes on', async (t) => {
  const tp = await startStreaming(60, 0, { 'platform.interactions.store': 'lmdb' })
  t.teardown(tp.close)
  const store = tp.service.store
  const append = store.appendStep.bind(store)
  const acked = new Set<number>()
  const refused: number[] = []
  let shared: Promise<void> | undefined
  // the text steps from seq 10 appended in one turn share one refusal; the rest are stored
  store.appendStep = (id: string, step: InteractionStep): Promise<void> => {
    if (step.seq < 10 || refused.length >= 3 || step.type !== 'text') {
      return append(id, step).then(() => {
        acked.add(step.seq)
      })
    }
    refused.push(step.seq)
    shared ??= new Promise<void>((_, reject) => setImmediate(() => reject(new Error('disk refused'))))
    return shared
  }
  t.teardown(() => {
    store.appendStep = append
  })
  const { seen, early, terminal } = await watched(tp, acked)
  t.match(await terminal, { status: 'COMPLETED' })
  t.ok(refused.length > 1, `steps shared the refusal (${refused.join(', ')})`)
  t.same(
    seen.filter((s) => refused.includes(s)),
    [],
    'no refused step was published'
  )
  t.same(
    seen,
    [...acked].sort((a, b) => a - b),
    'every stored step was published once, in seq order'
  )
  t.same(early, [], 'none before its answer')
})
