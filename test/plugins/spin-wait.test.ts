import t from 'tap'
import { spinningWait } from '../../runtime/plugins/worker/spin-wait.js'

/** A stand-in for `Atomics.wait` that records its calls and sleeps not at all. */
function fakeWait() {
  const calls: unknown[][] = []
  const wait = ((...args: unknown[]) => {
    calls.push(args)
    return 'timed-out'
  }) as typeof Atomics.wait
  return { wait, calls }
}

/** A clock that moves 10 µs a reading and runs `at[n]` on its n-th reading. */
function stepClock(at: Record<number, () => void> = {}) {
  let reads = 0
  return {
    now: () => {
      at[reads]?.()
      return reads++ * 0.01
    },
    reads: () => reads
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
