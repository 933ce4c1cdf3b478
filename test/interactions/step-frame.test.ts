import t from 'tap'
import { StreamSession, stepFrame, type StreamSink } from '../../runtime/interactions/stream-session.js'
import { StepFeed } from '../../runtime/interactions/feed.js'
import { answered, published } from '../../runtime/interactions/run-publication.js'
import type { Run } from '../../runtime/interactions/run-table.js'
import type { Interaction, InteractionStore } from '../../runtime/interactions/types.js'
import type { InteractionHeader, InteractionStep } from '../../runtime/interactions/index.js'

const step = (seq: number, text: string): InteractionStep => ({
  seq,
  type: 'text',
  text,
  toolName: null,
  data: {},
  usage: null,
  createdAt: '2026-11-24T00:00:00.000Z'
})

t.test('a step frame is always the frame of the step asked for, whatever was asked before', async (t) => {
  const a = step(0, 'a')
  const b = step(1, 'b')
  const frame = (s: InteractionStep) => `{"type":"interaction-step","step":${JSON.stringify(s)}}`
  for (const s of [a, a, b, a, b, b, step(1, 'b2')]) t.equal(stepFrame(s), frame(s), `seq ${s.seq} ${s.text}`)
  t.same(JSON.parse(stepFrame(a)), { type: 'interaction-step', step: a })
})

/** A sink that keeps what it is sent, and which sends went out in one batch (one corked write). */
function fakeSink() {
  const sent: { seq: number | undefined; frame: any; batch: number }[] = []
  let batches = 0
  let inBatch = 0
  const sink: StreamSink & { sent: typeof sent; closed: boolean } = {
    sent,
    closed: false,
    send(json, seq) {
      sent.push({ seq, frame: JSON.parse(json), batch: inBatch })
    },
    buffered: () => 0,
    drained: () => Promise.resolve(true),
    batch(fn) {
      inBatch = ++batches
      try {
        fn()
      } finally {
        inBatch = 0
      }
    },
    close() {
      sink.closed = true
    }
  }
  return sink
}

const LIMITS = { highWater: 64 * 1024, stallMs: 1000, pageSize: 200 }

t.test('a live stream: steps published together go in one batch; a gap is read from the store; one end', async (t) => {
  const stored: InteractionStep[] = [step(0, 'a'), step(1, 'b')]
  const store = {
    steps: async (_id: string, after: number, limit?: number) =>
      stored.filter((s) => s.seq > after).slice(0, limit ?? Infinity)
  } as unknown as InteractionStore
  const feed = new StepFeed()
  const id = 'int-live'
  const session = new StreamSession(store, feed, id, -1, LIMITS)
  const sink = fakeSink()
  const header = { id, status: 'RUNNING', store: true, steps: [...stored] } as unknown as Interaction
  session.start(sink, header)
  const settle = () => new Promise((r) => setImmediate(r))
  await settle()
  t.same(
    sink.sent.map((s) => s.seq),
    [0, 1],
    'the replay first'
  )

  // one commit acknowledged three steps: the feed hands them over in one pass
  for (const s of [step(2, 'c'), step(3, 'd'), step(4, 'e')]) {
    stored.push(s)
    feed.publishStep(id, s)
  }
  t.equal(sink.sent.length, 2, 'nothing is sent in the middle of the pass')
  await settle()
  const live = sink.sent.slice(2)
  t.same(
    live.map((s) => s.seq),
    [2, 3, 4]
  )
  t.ok(live[0]!.batch > 0 && live.every((s) => s.batch === live[0]!.batch), 'in one batch')

  // a step the feed never carried (5): the store fills the gap, every seq once and in order
  stored.push(step(5, 'f'), step(6, 'g'))
  feed.publishStep(id, stored[6]!)
  feed.publishStep(id, stored[4]!)
  await settle()
  t.same(
    sink.sent.map((s) => s.seq),
    [0, 1, 2, 3, 4, 5, 6],
    'the gap read from the store, a repeat ignored'
  )

  feed.publishTerminal({ ...header, status: 'COMPLETED' } as unknown as InteractionHeader)
  feed.publishStep(id, step(7, 'late'))
  await settle()
  const frames = sink.sent.map((s) => s.frame.type)
  t.same(frames.filter((f) => f === 'interaction-terminal').length, 1, 'exactly one terminal frame')
  t.equal(frames.at(-1), 'interaction-terminal', 'the terminal frame is the last')
  t.ok(sink.closed)
})

// The feed hands a step to each subscriber without copying its set: one that throws or leaves
// during the delivery costs the others nothing, and one that joins during it gets what follows.
t.test('the feed: every subscriber gets each step once, in order, whatever the others do', async (t) => {
  const feed = new StepFeed()
  const got: Record<string, number[]> = { a: [], b: [], c: [], late: [] }
  const noEnd = { onTerminal: () => {} }
  let offB: () => void = () => {}
  feed.subscribe('int-f', {
    ...noEnd,
    onStep: (s) => {
      got.a!.push(s.seq)
      if (s.seq === 1) offB()
      if (s.seq === 1) feed.subscribe('int-f', { ...noEnd, onStep: (x) => void got.late!.push(x.seq) })
      throw new Error('a broken subscriber')
    }
  })
  offB = feed.subscribe('int-f', { ...noEnd, onStep: (s) => void got.b!.push(s.seq) })
  feed.subscribe('int-f', { ...noEnd, onStep: (s) => void got.c!.push(s.seq) })
  for (let i = 0; i < 4; i++) feed.publishStep('int-f', step(i, `s${i}`))
  t.same(got.a, [0, 1, 2, 3], 'a subscriber that throws keeps getting steps')
  t.same(got.b, [0], 'one that left gets nothing more')
  t.same(got.c, [0, 1, 2, 3], 'the others are not cut short')
  t.same(got.late, [1, 2, 3], 'one that joined mid-delivery gets that step and the rest, once each')
})

// The turn behind the store and the run's end may wait at once: they share one promise, told
// once every step before them is published, in the order they began to wait.
t.test('publication waiters: told once everything is published, in order, not before', async (t) => {
  const feed = new StepFeed()
  const seen: string[] = []
  feed.subscribe('int-p', { onStep: (s) => void seen.push(`step ${s.seq}`), onTerminal: () => {} })
  const ack = Promise.resolve()
  const run = {
    header: { id: 'int-p' },
    unpublished: [0, 1].map((i) => ({ step: step(i, `s${i}`), state: 'writing' as const, ack })),
    lastAck: ack,
    onPublished: undefined,
    allPublished: undefined
  } as unknown as Run
  const first = published(run)
  const second = published(run)
  t.equal(first, second, 'one promise for every waiter')
  void first.then(() => seen.push('turn'))
  void second.then(() => seen.push('end'))
  await new Promise((r) => setImmediate(r))
  t.same(seen, [], 'nobody is told before the store answered')
  answered(run, ack, 'stored', feed)
  await new Promise((r) => setImmediate(r))
  t.same(seen, ['step 0', 'step 1', 'turn', 'end'], 'the steps first, then each waiter in turn')
  t.equal(await published(run), undefined, 'nothing left: answered at once')
  run.unpublished.push({ step: step(2, 's2'), state: 'writing', ack })
  t.not(published(run), first, 'a later wait has a promise of its own')
})
