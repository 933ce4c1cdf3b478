import t from 'tap'
import { Cancellation, abortSignalOf } from '../../runtime/plugins/index.js'
import { Deadlines } from '../../runtime/plugins/deadlines.js'
import { CallTable } from '../../runtime/plugins/call-table.js'

t.test('Cancellation: listeners run once on abort, with the reason kept', async (t) => {
  const c = new Cancellation()
  let calls = 0
  c.addEventListener('abort', () => {
    calls++
  })
  t.equal(c.aborted, false)
  c.abort('stop')
  c.abort('again')
  t.equal(calls, 1)
  t.equal(c.aborted, true)
  t.equal(c.reason, 'stop', 'the first reason stays')
})

t.test('Cancellation: without a reason it is an AbortError, like AbortController', async (t) => {
  const c = new Cancellation()
  c.abort()
  t.ok(c.reason instanceof DOMException)
  t.equal((c.reason as DOMException).name, 'AbortError')
})

t.test('Cancellation: a removed listener never runs; one added after the abort never runs', async (t) => {
  const c = new Cancellation()
  let removed = 0
  let late = 0
  const fn = (): void => {
    removed++
  }
  c.addEventListener('abort', fn)
  c.removeEventListener('abort', fn)
  c.abort()
  c.addEventListener('abort', () => {
    late++
  })
  t.equal(removed, 0)
  t.equal(late, 0)
})

t.test('Cancellation.throwIfAborted: nothing before the abort, the reason after, as AbortSignal does', async (t) => {
  const c = new Cancellation()
  t.doesNotThrow(() => {
    c.throwIfAborted()
  })
  c.abort('stop')
  let thrown: unknown
  try {
    c.throwIfAborted()
  } catch (err) {
    thrown = err
  }
  t.equal(thrown, 'stop', 'the reason is thrown')
})

t.test('Cancellation.signal: a real AbortSignal, made on first read, that follows the cancellation', async (t) => {
  const c = new Cancellation()
  const s = c.signal
  t.ok(s instanceof AbortSignal)
  t.equal(c.signal, s, 'made once')
  let fired = 0
  s.addEventListener('abort', () => {
    fired++
  })
  c.abort('bye')
  t.equal(fired, 1)
  t.equal(s.aborted, true)
  t.equal(s.reason, 'bye')

  const after = new Cancellation()
  after.abort('early')
  t.equal(after.signal.aborted, true, 'read after the abort: already aborted')
  t.equal(after.signal.reason, 'early')
})

t.test('abortSignalOf: a Cancellation gives its signal, an AbortSignal itself', async (t) => {
  const c = new Cancellation()
  t.equal(abortSignalOf(c), c.signal)
  const ac = new AbortController()
  t.equal(abortSignalOf(ac.signal), ac.signal)
})

t.test('Deadlines: due keys expire in start order, deleted ones never', async (t) => {
  const expired: string[] = []
  let done: () => void = () => {}
  const all = new Promise<void>((resolve) => {
    done = resolve
  })
  const d = new Deadlines<string>(20, (k) => {
    expired.push(k)
    if (expired.length === 2) done()
  })
  d.add('a')
  d.add('b')
  d.add('c')
  d.delete('b')
  await all
  t.same(expired, ['a', 'c'])
  d.clear()
})

t.test('Deadlines: a key added after the timer lapsed is still timed; clear drops everything', async (t) => {
  const expired: string[] = []
  let done: () => void = () => {}
  let wait = new Promise<void>((resolve) => {
    done = resolve
  })
  const d = new Deadlines<string>(10, (k) => {
    expired.push(k)
    done()
  })
  d.add('first')
  await wait
  wait = new Promise<void>((resolve) => {
    done = resolve
  })
  d.add('second')
  await wait
  t.same(expired, ['first', 'second'])
  d.add('cleared')
  d.clear()
  await new Promise((resolve) => setTimeout(resolve, 40))
  t.same(expired, ['first', 'second'], 'a cleared key never expires')
})

t.test('Deadlines with unrefIdle: the timer holds the process only while a key is live', async (t) => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
  const before = timers()
  const d = new Deadlines<string>(60_000, () => {}, true)
  d.add('a')
  t.equal(timers(), before + 1, 'armed for a live key')
  d.delete('a')
  t.equal(timers(), before, 'left armed, unref: nothing live')
  d.add('b')
  d.add('c')
  t.equal(timers(), before + 1, 'the same timer holds it again')
  d.delete('b')
  t.equal(timers(), before + 1, 'one key still live')
  d.delete('c')
  t.equal(timers(), before)
  d.clear()
})

t.test('CallTable: calls beside the first, settled in any order, are each found by their own id', async (t) => {
  const c = new CallTable<string>()
  t.equal(c.size, 0)
  t.equal(c.get(1), undefined)
  c.set(1, 'one')
  c.set(2, 'two')
  c.set(3, 'three')
  t.same([c.size, c.get(1), c.get(2), c.get(3)], [3, 'one', 'two', 'three'])
  t.same(c.ids().sort(), [1, 2, 3])
  t.equal(c.delete(1), true, 'the first call ends before the others')
  t.equal(c.delete(1), false, 'once')
  t.same([c.has(1), c.get(1), c.size], [false, undefined, 2])
  c.set(4, 'four')
  t.same([c.get(2), c.get(3), c.get(4), c.size], ['two', 'three', 'four', 3], 'a new call takes the free fields')
  t.equal(c.delete(3), true)
  t.equal(c.delete(99), false, 'an unknown id')
  t.same(c.ids().sort(), [2, 4])
  c.set(2, 'two again')
  t.equal(c.get(2), 'two again', 'setting an id in flight replaces its value')
  const walked: number[] = []
  for (const id of c.ids()) {
    walked.push(id)
    c.delete(id)
  }
  t.same([walked.sort(), c.size], [[2, 4], 0], 'the ids are a copy: deleting while walking them misses none')
  c.set(5, 'five')
  c.set(6, 'six')
  c.clear()
  t.same([c.size, c.has(5), c.has(6), c.ids()], [0, false, false, []])
})
