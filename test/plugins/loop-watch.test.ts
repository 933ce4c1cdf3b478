import t from 'tap'
import { setImmediate as turn } from 'node:timers/promises'
import { LoopWatch } from '../../runtime/plugins/isolate/loop-watch.js'

/** A clock the test moves by hand. */
function handClock() {
  let ms = 0
  return { now: () => ms, move: (d: number) => void (ms += d) }
}

/** Ends a poll the test left running (it would keep the process alive). */
async function settle(watch: LoopWatch, clock: ReturnType<typeof handClock>): Promise<void> {
  clock.move(1000)
  while (watch.polling) await turn()
}

t.test('after an answer the loop polls for the watch, then sleeps', async (t) => {
  const clock = handClock()
  const watch = new LoopWatch(50, clock.now)
  watch.answered()
  t.ok(watch.polling)
  await turn()
  await turn()
  t.ok(watch.polling, 'still polling inside the 50 µs')
  clock.move(0.06)
  await turn()
  await turn()
  t.notOk(watch.polling, 'stopped once the watch was over')
})

t.test('a call that comes ends the poll; answering starts it again', async (t) => {
  const clock = handClock()
  const watch = new LoopWatch(50, clock.now)
  watch.answered()
  clock.move(0.01)
  watch.arrived()
  await turn()
  await turn()
  t.notOk(watch.polling, 'no polling while a call is being handled')
  watch.answered()
  t.ok(watch.polling)
  await settle(watch, clock)
})

t.test(
  'after a lull longer than twice the watch the next answer does not poll; a quick call brings it back',
  async (t) => {
    const clock = handClock()
    const watch = new LoopWatch(50, clock.now)
    watch.answered()
    clock.move(5)
    await turn()
    watch.arrived()
    watch.answered()
    t.notOk(watch.polling, 'the last call came 5 ms after the answer before it')
    clock.move(0.04)
    watch.arrived()
    watch.answered()
    t.ok(watch.polling, 'this one came 40 µs after: polling again')
    await settle(watch, clock)
  }
)

t.test('0 never polls', async (t) => {
  const watch = new LoopWatch(0, handClock().now)
  watch.answered()
  t.notOk(watch.polling)
})
