import t from 'tap'
import { spinningWait } from '../../runtime/plugins/worker/spin-wait.js'

/** A stand-in for `Atomics.wait` that records its calls; `sleep` is what its sleeping does to the clock. */
function fakeWait(sleep = (): void => {}) {
  const calls: unknown[][] = []
  const wait = ((...args: unknown[]) => {
    calls.push(args)
    sleep()
    return 'timed-out'
  }) as typeof Atomics.wait
  return { wait, calls }
}

/** A clock that moves 10 µs a reading and runs `at[n]` on its n-th reading. */
function stepClock(at: Record<number, () => void> = {}) {
  let reads = 0
  let ms = 0
  return {
    now: () => {
      at[reads]?.()
      reads++
      return (ms += 0.01)
    },
    reads: () => reads,
    sleep: (d: number) => {
      ms += d
    }
  }
}

t.test("the first array's waits watch the value before they sleep, with the caller's arguments", async (t) => {
  const { wait, calls } = fakeWait()
  const clock = stepClock()
  const spin = spinningWait(wait, 50, clock.now)
  const pool = new Int32Array(new SharedArrayBuffer(8))
  t.equal(spin(pool, 0, 0, 123), 'timed-out', "the real wait's answer")
  t.same(calls, [[pool, 0, 0, 123]], 'slept once, on the same array, index, value and timeout')
  t.ok(clock.reads() >= 5, `watched for 50 µs of the clock first (${clock.reads()} readings)`)
})

t.test('a change seen while watching answers without sleeping', async (t) => {
  const { wait, calls } = fakeWait()
  const pool = new Int32Array(new SharedArrayBuffer(8))
  const spin = spinningWait(wait, 50, stepClock({ 2: () => Atomics.add(pool, 0, 1) }).now)
  t.equal(spin(pool, 0, 0), 'not-equal')
  t.same(calls, [], 'never slept')
  t.equal(spin(pool, 0, 0), 'not-equal', 'a value already changed answers at once')
  t.same(calls, [])
})

t.test("any other array goes straight to the real wait: a plugin's own waits keep their meaning", async (t) => {
  const { wait, calls } = fakeWait()
  const clock = stepClock()
  const spin = spinningWait(wait, 50, clock.now)
  const pool = new Int32Array(new SharedArrayBuffer(8))
  const own = new Int32Array(new SharedArrayBuffer(8))
  Atomics.store(pool, 0, 7)
  spin(pool, 0, 7)
  const readsAfterPool = clock.reads()
  t.equal(spin(own, 0, 0, 5), 'timed-out')
  t.same(calls[1], [own, 0, 0, 5])
  t.equal(clock.reads(), readsAfterPool, 'no watching for it')
})

t.test(
  'after a lull longer than twice the watch the next wait sleeps at once; a quick call brings the watch back',
  async (t) => {
    const clock = stepClock()
    let sleepMs = 5
    const { wait, calls } = fakeWait(() => clock.sleep(sleepMs))
    const spin = spinningWait(wait, 50, clock.now)
    const pool = new Int32Array(new SharedArrayBuffer(8))
    const readsOf = (): number => {
      const before = clock.reads()
      spin(pool, 0, 0)
      return clock.reads() - before
    }
    t.ok(readsOf() > 4, 'the first wait watches, then sleeps 5 ms')
    sleepMs = 0.03
    t.equal(readsOf(), 2, 'after that lull: no watch (one reading before the sleep, one after)')
    t.ok(readsOf() > 4, 'the call came 40 µs after the thread went idle: watching again')
    t.equal(calls.length, 3)
  }
)
