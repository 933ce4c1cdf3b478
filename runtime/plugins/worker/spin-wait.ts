/**
 * A worker thread that has answered a call watches for the next one for a few microseconds before
 * it sleeps. piscina parks an idle thread in `Atomics.wait` on its request counter; waking a
 * sleeping thread is a futex wake, and on a virtual machine whose idle vCPUs halt it is the
 * dearest part of a call (measured: a call one at a time 52-67 µs with 20-25 µs of kernel time;
 * 18-35 µs with a 30-50 µs watch, and less CPU per call, since looking costs less than parking
 * and waking). A thread that finds no call in time sleeps as before; `platform.sandbox.spin-us`.
 */

type Wait = typeof Atomics.wait
type Clock = () => number

/**
 * `Atomics.wait` that, for the first array it is called with, watches the value for `spinUs` before
 * it sleeps. The first wait of a pool's thread is piscina's, made after the task module has loaded
 * and before any plugin code runs; every other array goes straight to the real wait, so a plugin's
 * own waits (a notify that changes nothing included) keep their meaning. piscina adds to the counter
 * before it notifies, so a change seen while watching is the notify the sleep would have had.
 * Watching pays only while calls follow each other closely: after a sleep longer than twice the
 * watch the next wait sleeps at once, and watches again once a call comes within twice the watch of
 * the thread going idle (sparse calls cost no watching beyond the first of each lull).
 */
export function spinningWait(wait: Wait, spinUs: number, now: Clock = () => performance.now()): Wait {
  const spinMs = spinUs / 1000
  let pool: unknown
  let watch = true
  return function (array, index, value, timeout) {
    pool ??= array
    if (array !== pool) return wait(array as Int32Array, index, value as number, timeout)
    const t0 = now()
    if (watch) {
      do {
        if (Atomics.load(array as Int32Array, index) !== Number(value)) return 'not-equal'
      } while (now() - t0 < spinMs)
    }
    const answer = wait(array as Int32Array, index, value as number, timeout)
    // the idle gap, watch included: would a watch (or a longer one) have caught this call?
    watch = now() - t0 < 2 * spinMs
    return answer
  } as Wait
}

/** Installs the watch in this thread (the worker tier's task module calls it once); 0 leaves it off. */
export function spinBeforeSleep(spinUs: number): void {
  if (spinUs > 0) Atomics.wait = spinningWait(Atomics.wait, spinUs)
}
