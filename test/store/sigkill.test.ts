import t from 'tap'
import { killWriterAfter } from '../helpers/kill-writer.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import { drainWritersOnClose } from '../../runtime/store/lmdb-writer-drain.js'

// A child writes through the real Store; right after a write resolves it reports the key and the
// parent kills it with SIGKILL. Every reported key must be there when the environment is reopened.
const child = `
const { Store } = await import(${JSON.stringify(new URL('../../dist/runtime/store/index.js', import.meta.url).href)})
const store = new Store(process.argv[1])
const db = store.db('kill-test')
for (let i = 0; ; i++) {
  await db.put('k' + i, { i, payload: 'x'.repeat(100) })
  process.stdout.write('k' + i + '\\n')
}
`

t.test('a write that resolved survives SIGKILL of the writer', async (t) => {
  for (let round = 0; round < 3; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'platform-kill-'))
    const acked = await killWriterAfter(child, dir, 50 + round * 100)
    t.ok(acked.length >= 50, `round ${round}: ${acked.length} writes acknowledged before the kill`)
    const store = new Store(dir)
    const db = store.db<{ i: number }>('kill-test')
    const missing = acked.filter((k) => db.get(k) === undefined)
    t.same(missing, [], `round ${round}: every acknowledged write is present`)
    await store.close()
  }
})

t.test('named databases are separate and the store refuses use after close', async (t) => {
  // a dot in the directory name must not make lmdb treat it as a file
  const dir = mkdtempSync(join(tmpdir(), 'platform.store.'))
  const store = new Store(dir)
  await store.db('a').put('k', 1)
  await store.db('b').put('k', 2)
  t.equal(store.db('a'), store.db('a'), 'opened once')
  t.equal(store.db('a').get('k'), 1)
  t.equal(store.db('b').get('k'), 2)
  await store.close()
  t.equal(store.isOpen, false)
  t.throws(() => store.db('a'), /closed/)
})

// lmdb-js resolves a write when its transaction committed, while its writer thread still runs;
// closing the environment then freed it under the thread (a SIGSEGV). The native object stands in
// here so the order is forced: the thread's progress report, then its end.
t.test('the native close waits for every writer thread to end', async (t) => {
  const events: string[] = []
  const callbacks: ((status: number) => unknown)[] = []
  const env = {
    startWriting: (_address: number, cb: (status: number) => unknown) => {
      callbacks.push(cb)
    },
    close: () => {
      events.push('native close')
    }
  }
  const closed = drainWritersOnClose(env)
  env.startWriting(1, (s) => events.push(`writer ${s}`))
  env.startWriting(2, (s) => events.push(`writer ${s}`))
  callbacks[0]!(1)
  callbacks[0]!(0)
  callbacks[1]!(1)
  env.close()
  t.same(events, ['writer 1', 'writer 0', 'writer 1'], 'committed, but the second thread still runs')
  callbacks[1]!(0)
  await closed()
  t.same(events, ['writer 1', 'writer 0', 'writer 1', 'writer 0', 'native close'], 'closed once it ended')
  const idle = { startWriting: env.startWriting, close: () => events.push('idle close') }
  const idleClosed = drainWritersOnClose(idle)
  idle.close()
  await idleClosed()
  t.equal(events.at(-1), 'idle close', 'with no writer running, at once')
})

t.test('a store closed right after each acknowledged write reopens with every write', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-close-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (let i = 0; i < 50; i++) {
    const store = new Store(dir)
    await store.db('c').put(`k${i}`, i)
    await store.close()
  }
  const store = new Store(dir)
  t.equal([...store.db('c').getKeys()].length, 50)
  await store.close()
})
