import t from 'tap'
import { SessionFrames } from '../../runtime/ai/agent-frames.js'
import { TextBatch } from '../../runtime/ai/text-batch.js'
import { SseStream } from '../../runtime/http/index.js'

/** A batch whose writes are kept as the frames' text (the bytes are only valid during a write). */
function recorded(sse: boolean) {
  const writes: { frames: string[]; all: string }[] = []
  const frames = new SessionFrames('s-1')
  const batch = new TextBatch(frames, sse, (b) => {
    const out = Array.from({ length: b.count }, (_, i) => b.frame(i).toString())
    writes.push({ frames: out, all: b.all().toString() })
  })
  return { batch, frames, writes, ref: new SessionFrames('s-1') }
}

const pass = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

t.test("a pass's deltas leave in one write, in order, the frames byte for byte", async (t) => {
  const { batch, writes, ref } = recorded(false)
  const deltas = ['You ', 'said: ', '"hi" ', 'é😀 ', 'x'.repeat(3000), '\n']
  for (const d of deltas) batch.add(d)
  t.same(writes, [], 'nothing is written inside the pass')
  await pass()
  const want = deltas.map((d) => ref.textDelta(d))
  t.same(writes, [{ frames: want, all: want.join('') }])
  // a later pass of one delta: a frame of its own, numbered on
  batch.add('more ')
  await pass()
  const more = ref.textDelta('more ')
  t.same(writes[1], { frames: [more], all: more })
})

t.test('a flush before another frame keeps the seq order; a flushed pass writes nothing more', async (t) => {
  const { batch, frames, writes, ref } = recorded(false)
  batch.add('a ')
  batch.add('b ')
  // what a turn target does before any other frame
  batch.flush()
  const a = ref.textDelta('a ')
  const b = ref.textDelta('b ')
  t.same(writes, [{ frames: [a, b], all: a + b }])
  t.equal(frames.simple('progress', 'x'), ref.simple('progress', 'x'), 'the other frame takes the next seq')
  batch.add('c ')
  await pass()
  t.equal(writes.length, 2, 'the flushed frames are not written again')
  const c = ref.textDelta('c ')
  t.same(writes[1], { frames: [c], all: c })
})

t.test('SSE: every frame one server-sent event, the pass in one write', async (t) => {
  const { batch, writes, ref } = recorded(true)
  const deltas = ['one ', 'two\n', '\u2028']
  for (const d of deltas) batch.add(d)
  await pass()
  const want = deltas.map((d) => SseStream.frame({ data: ref.textDelta(d) }))
  t.same(writes, [{ frames: want, all: want.join('') }])
})

t.test('a burst that outgrows the buffer, then small passes again; batches of several turns keep apart', async (t) => {
  const one = recorded(false)
  const two = recorded(true)
  const big = Array.from({ length: 400 }, (_, i) => `word${i} `)
  for (const d of big) one.batch.add(d)
  two.batch.add('other ')
  await pass()
  t.same(
    one.writes[0]!.frames,
    big.map((d) => one.ref.textDelta(d))
  )
  t.same(two.writes[0]!.frames, [SseStream.frame({ data: two.ref.textDelta('other ') })])
  for (const d of ['small ', 'again ']) {
    one.batch.add(d)
    await pass()
    const want = one.ref.textDelta(d)
    t.same(one.writes.at(-1), { frames: [want], all: want })
  }
})

t.test('a write that throws loses its own frames only: the batch writes the next pass', async (t) => {
  const ref = new SessionFrames('s-1')
  const seen: string[] = []
  let fail = true
  const batch = new TextBatch(new SessionFrames('s-1'), false, (b) => {
    if (fail) throw new Error('socket gone')
    seen.push(b.all().toString())
  })
  batch.add('lost ')
  t.throws(() => batch.flush(), /socket gone/)
  ref.textDelta('lost ')
  fail = false
  batch.add('kept ')
  await pass()
  t.same(seen, [ref.textDelta('kept ')])
})
