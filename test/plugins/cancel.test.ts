import t from 'tap'
import { Cancellation, abortSignalOf } from '../../runtime/plugins/index.js'
import { Deadlines } from '../../runtime/plugins/deadlines.js'

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
