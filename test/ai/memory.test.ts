import t, { type Test } from 'tap'
import { killWriterAfter, lastAcked } from '../helpers/kill-writer.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AI, type AiMessage } from '../../runtime/ai/index.js'
import { InMemoryConversationMemory, LmdbConversationMemory, type MemoryKey } from '../../runtime/ai/memory.js'
import { SessionScopedMemory } from '../../runtime/ai/session-memory.js'
import { Store } from '../../runtime/store/index.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { runMemoryContract } from './memory-contract.js'

function tempStore(t: Test): Store {
  const dir = mkdtempSync(join(tmpdir(), 'platform-memory-'))
  const store = new Store(dir)
  t.teardown(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return store
}

runMemoryContract(t, 'memory', async (_t, max) => new InMemoryConversationMemory(max))
runMemoryContract(
  t,
  'lmdb',
  async (t, max) => new LmdbConversationMemory(tempStore(t).db<AiMessage, MemoryKey>('ai-memory'), max)
)

t.test('memory: a message with nested fields is kept as a deep copy', async (t) => {
  const m = new InMemoryConversationMemory(10)
  const call = { id: 'c1', name: 'search', arguments: { q: 'x' } }
  await m.append('k', [{ role: 'assistant', content: '', toolCalls: [call] }])
  call.arguments.q = 'changed'
  const [read] = await m.read('k')
  t.same(read, { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search', arguments: { q: 'x' } }] })
})

t.test('session-scoped: a session key never reaches LMDB, any other key does', async (t) => {
  const db = tempStore(t).db<AiMessage, MemoryKey>('ai-memory')
  const lmdb = new LmdbConversationMemory(db, 5)
  const m = new SessionScopedMemory(lmdb)
  t.equal(m.kind, 'lmdb')
  t.equal(m.maxMessages, 5)
  await m.append('s:abc', [{ role: 'user', content: 'mine' }])
  await m.append('p:abc:c1', [{ role: 'user', content: 'kept' }])
  t.same(await m.read('s:abc'), [{ role: 'user', content: 'mine' }])
  t.same(await lmdb.read('s:abc'), [], 'not written to disk')
  t.same(await lmdb.read('p:abc:c1'), [{ role: 'user', content: 'kept' }])
  t.equal(await m.clear('s:abc'), true)
  t.same(await m.read('s:abc'), [])
  t.same(await m.read('p:abc:c1'), [{ role: 'user', content: 'kept' }])
})

t.test('lmdb: ids that prefix each other stay apart', async (t) => {
  const m = new LmdbConversationMemory(tempStore(t).db<AiMessage, MemoryKey>('ai-memory'), 5)
  await m.append('ab', [{ role: 'user', content: 'ab' }])
  await m.append('a', [{ role: 'user', content: 'a' }])
  await m.append('abc', [{ role: 'user', content: 'abc' }])
  t.same(await m.read('a'), [{ role: 'user', content: 'a' }])
  t.same(await m.read('ab'), [{ role: 'user', content: 'ab' }])
  await m.clear('ab')
  t.same(await m.read('abc'), [{ role: 'user', content: 'abc' }])
})

t.test('lmdb: concurrent appends keep the bound and every message in order', async (t) => {
  const m = new LmdbConversationMemory(tempStore(t).db<AiMessage, MemoryKey>('ai-memory'), 20)
  await Promise.all(Array.from({ length: 50 }, (_, i) => m.append('k', [{ role: 'user', content: `m${i}` }])))
  t.same(
    (await m.read('k')).map((x) => x.content),
    Array.from({ length: 20 }, (_, i) => `m${30 + i}`)
  )
})

t.test('the platform keeps memory in LMDB across a restart, bounded by config', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-memory-restart-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = { 'platform.data-dir': dataDir, 'platform.ai.memory.max-messages': 3 }
  const first = await startTestPlatform(config, { install: installAreas })
  const mem = first.platform.area(AI).memory
  t.equal(mem.kind, 'lmdb', 'lmdb by default')
  t.equal(mem.maxMessages, 3)
  for (let i = 0; i < 5; i++) await mem.append('conv-1', [{ role: 'user', content: `m${i}` }])
  await first.platform.close()

  const second = await startTestPlatform(config, { install: installAreas })
  t.teardown(() => second.platform.close())
  t.same(
    (await second.platform.area(AI).memory.read('conv-1')).map((x) => x.content),
    ['m2', 'm3', 'm4'],
    'the newest three survived'
  )
})

t.test('platform.ai.memory.store: memory keeps nothing across a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-memory-volatile-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = { 'platform.data-dir': dataDir, 'platform.ai.memory.store': 'memory' }
  const first = await startTestPlatform(config, { install: installAreas })
  const mem = first.platform.area(AI).memory
  t.equal(mem.kind, 'memory')
  t.equal(mem.maxMessages, 50, 'default bound')
  await mem.append('c', [{ role: 'user', content: 'x' }])
  t.same(await mem.read('c'), [{ role: 'user', content: 'x' }])
  await first.platform.close()
  const second = await startTestPlatform(config, { install: installAreas })
  t.teardown(() => second.platform.close())
  t.same(await second.platform.area(AI).memory.read('c'), [])
})

// A child appends through the real LMDB memory and reports each resolved append; the parent kills
// it with SIGKILL. Every reported message must be there, in order, when the store is reopened.
const child = `
const { Store } = await import(${JSON.stringify(new URL('../../dist/runtime/store/index.js', import.meta.url).href)})
const { LmdbConversationMemory } = await import(${JSON.stringify(new URL('../../dist/runtime/ai/memory.js', import.meta.url).href)})
const store = new Store(process.argv[1])
const mem = new LmdbConversationMemory(store.db('ai-memory'), 1000000)
for (let i = 0; ; i++) {
  await mem.append('conv', [{ role: 'user', content: 'm' + i }])
  process.stdout.write(i + '\\n')
}
`

t.test('an acknowledged append survives SIGKILL of the writer', async (t) => {
  for (let round = 0; round < 2; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'platform-memory-kill-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const acked = lastAcked(await killWriterAfter(child, dir, 40 + round * 100 + 1))
    t.ok(acked >= 40, `round ${round}: ${acked + 1} appends acknowledged before the kill`)
    const store = new Store(dir)
    const kept = (
      await new LmdbConversationMemory(store.db<AiMessage, MemoryKey>('ai-memory'), 1_000_000).read('conv')
    ).map((m) => m.content)
    t.same(
      kept.slice(0, acked + 1),
      Array.from({ length: acked + 1 }, (_, i) => `m${i}`),
      `round ${round}: every acknowledged append is there, in order`
    )
    await store.close()
  }
})
