import t, { type Test } from 'tap'
import { killWriterAfter, lastAcked } from '../helpers/kill-writer.js'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LmdbJournalStore, RECORD_MAX, type JournalIndexKey } from '../../runtime/fleet/lmdb-journal-store.js'
import { Store } from '../../runtime/store/index.js'
import { ev, runJournalStoreSuite } from './journal-store-suite.js'

function tempDir(t: Test, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `platform-${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

// how the journal's events are opened (a database is opened one way only)
const SHARED = { shareStructures: true }

/** Events held in the journal's records (a record of one event, as stores before records wrote it, is itself). */
function held(env: Store): number {
  let n = 0
  for (const { value } of env.db<unknown, [number, number]>('journal', SHARED).getRange())
    n += Array.isArray(value) ? value.length : 1
  return n
}

const indexKeys = (env: Store, name: string): string[] =>
  [...env.db<true, JournalIndexKey>(name).getKeys()].map((k) => k[0])

// each open() closes the previous environment and opens the directory afresh: a real restart
async function fixture(t: Test, max: number) {
  const dir = tempDir(t, 'journal')
  let env: Store | undefined
  t.teardown(() => env?.close())
  return {
    env: () => env!,
    async open() {
      await env?.close()
      env = new Store(dir)
      return new LmdbJournalStore(env, max)
    }
  }
}

runJournalStoreSuite(t, 'lmdb', fixture)

t.test('lmdb: the journal survives a restart, and appends after it sort after the ones before', async (t) => {
  const f = await fixture(t, 100)
  const first = await f.open()
  const before = [
    ev('CoordinationStarted', 'c', 1, { coordinatorName: 'o' }),
    ev('AgentDispatched', 'c', 1, { agentName: 'a' })
  ]
  await first.append(before)
  const second = await f.open()
  t.same(await second.coordination('c'), before, 'every event, whole')
  const after = ev('AgentCompleted', 'c', 1, { agentName: 'a', durationMs: 3 })
  await second.append([after])
  t.same(
    (await second.coordination('c')).map((e) => e.eventId),
    [...before, after].map((e) => e.eventId),
    'the sequence continues: same millisecond, still after'
  )
  t.same(
    (await second.query({ agent: 'a', limit: 10 })).map((e) => e.eventId),
    [after, before[1]!].map((e) => e.eventId)
  )
})

t.test('lmdb: two stores on one environment, appending at once in one millisecond, lose nothing', async (t) => {
  const env = new Store(tempDir(t, 'journal-two'))
  t.teardown(() => env.close())
  const a = new LmdbJournalStore(env, 1000)
  const b = new LmdbJournalStore(env, 1000)
  const events = Array.from({ length: 40 }, (_, i) => ev('AgentDispatched', 'c', 9, { agentName: `a${i}` }))
  await Promise.all(events.map((e, i) => (i % 2 === 0 ? a : b).append([e])))
  t.same(
    (await a.coordination('c')).map((e) => e.eventId),
    events.map((e) => e.eventId),
    'every event, in the order appended'
  )
})

t.test('lmdb: eviction takes the index keys with the events', async (t) => {
  const f = await fixture(t, 4)
  const s = await f.open()
  for (let i = 0; i < 10; i++)
    await s.append([
      ev('AgentHandoff', `c-${i}`, i, { fromAgent: `from-${i}`, toAgent: 'shared' }),
      ev('AgentCompleted', `c-${i}`, i, { agentName: 'shared', durationMs: i })
    ])
  const env = f.env()
  t.equal(held(env), 4)
  t.equal(env.db('journal', SHARED).getCount(), 2, 'an append of one millisecond is one record')
  t.same(indexKeys(env, 'journal-by-coordination'), ['c-8', 'c-9'], 'one key per coordination of a kept record')
  t.same(
    indexKeys(env, 'journal-by-agent'),
    ['from-8', 'from-9', 'shared', 'shared'],
    'one key per distinct agent of a kept record'
  )
  const values = ['journal-by-coordination', 'journal-by-agent'].flatMap((name) =>
    [...env.db<true, JournalIndexKey>(name).getRange()].map((r) => r.value)
  )
  t.ok(values.length === 6 && values.every((v) => v === true), 'an index key holds true, as msgpack encodes it')
  const again = await f.open()
  t.equal((await again.query({ limit: 100 })).length, 4, 'the bound holds across a restart')
  const meta = f.env().db<number, string>('journal-meta')
  t.equal(meta.get('count'), 4, 'the count is kept with the sequence')
  // as a data directory written before the count was kept
  await meta.remove('count')
  await again.append([ev('AgentCompleted', 'c-10', 10, { agentName: 'shared', durationMs: 10 })])
  t.equal(held(f.env()), 4, 'the bound holds without a kept count')
  t.equal(meta.get('count'), 4, 'and the count is kept again')
})

t.test('lmdb: eviction splits the oldest record, keeping the keys of what stays', async (t) => {
  const f = await fixture(t, 3)
  const s = await f.open()
  const first = [
    ev('AgentDispatched', 'c-a', 1, { agentName: 'a' }),
    ev('AgentDispatched', 'c-b', 1, { agentName: 'b' }),
    ev('AgentCompleted', 'c-b', 1, { agentName: 'a' })
  ]
  await s.append(first)
  const next = ev('AgentCompleted', 'c-c', 2, { agentName: 'c' })
  await s.append([next])
  const env = f.env()
  t.equal(held(env), 3)
  t.same(indexKeys(env, 'journal-by-coordination'), ['c-b', 'c-c'], 'c-a left with its only event')
  t.same(indexKeys(env, 'journal-by-agent'), ['a', 'b', 'c'], 'a stays: the kept AgentCompleted is its')
  t.same(
    (await s.query({ limit: 10 })).map((e) => e.eventId),
    [next, first[2]!, first[1]!].map((e) => e.eventId)
  )
  t.same(await s.coordination('c-a'), [])
  t.same(await s.coordination('c-b'), first.slice(1))
  t.same(
    (await s.query({ agent: 'a', limit: 10 })).map((e) => e.eventId),
    [first[2]!.eventId]
  )
  await s.append([
    ev('AgentCompleted', 'c-d', 3, { agentName: 'd' }),
    ev('AgentCompleted', 'c-d', 3, { agentName: 'd' })
  ])
  t.same(indexKeys(f.env(), 'journal-by-coordination'), ['c-c', 'c-d'])
  t.same(indexKeys(f.env(), 'journal-by-agent'), ['c', 'd'])
})

t.test('lmdb: a record holds RECORD_MAX events at most, and reads keep journal order across records', async (t) => {
  const f = await fixture(t, 1000)
  const s = await f.open()
  const burst = Array.from({ length: RECORD_MAX * 2 + 3 }, (_, i) =>
    ev('AgentCompleted', i % 2 === 0 ? 'c-even' : 'c-odd', 5, { agentName: 'w', durationMs: i })
  )
  await s.append(burst)
  const env = f.env()
  t.equal(env.db('journal', SHARED).getCount(), 3)
  t.same(indexKeys(env, 'journal-by-agent'), ['w', 'w', 'w'])
  t.same(
    (await s.query({ limit: 1000 })).map((e) => e.eventId),
    burst.map((e) => e.eventId).reverse()
  )
  t.same(
    (await s.query({ coordinationId: 'c-odd', limit: 5 })).map((e) => e.eventId),
    burst
      .filter((_, i) => i % 2 === 1)
      .map((e) => e.eventId)
      .reverse()
      .slice(0, 5),
    'newest first, within a record too'
  )
  t.same(
    (await s.coordination('c-even')).map((e) => e.eventId),
    burst.filter((_, i) => i % 2 === 0).map((e) => e.eventId)
  )
})

t.test('lmdb: events are stored without their keys, and events stored with them still read', async (t) => {
  const dir = tempDir(t, 'journal-old')
  // as a data directory written before the events' keys were shared: each value holds its keys
  const old = ev('AgentDispatched', 'c-old', 1, { agentName: 'a', skill: 'run' })
  const before = new Store(dir)
  await before.db<unknown, [number, number]>('journal').put([Date.parse(old.timestamp), 1], old)
  await before.db<true, JournalIndexKey>('journal-by-coordination').put(['c-old', Date.parse(old.timestamp), 1], true)
  await before.db<number, string>('journal-meta').put('seq', 1)
  await before.close()
  const env = new Store(dir)
  t.teardown(() => env.close())
  const s = new LmdbJournalStore(env, 100)
  const now = ev('AgentCompleted', 'c-new', 2, { agentName: 'a', skill: 'run', durationMs: 4 })
  await s.append([now])
  t.same(await s.coordination('c-old'), [old], 'an event stored with its keys reads whole')
  t.same(await s.coordination('c-new'), [now])
  const raw = [...env.raw<[number, number]>('journal').getRange()].map((r) => r.value.toString('latin1'))
  t.equal(raw.length, 2)
  t.match(raw[0], /coordinationId/, 'the old value holds its keys')
  t.notMatch(raw[1], /coordinationId|durationMs/, 'the new one holds only its values')
  t.equal((await s.query({ limit: 10 })).length, 2)
})

t.test('lmdb: a name indexed by its digest is told apart from an agent named like the digest', async (t) => {
  const f = await fixture(t, 3)
  const s = await f.open()
  const long = 'x'.repeat(5000)
  const twin = `sha256:${createHash('sha256').update(long).digest('hex')}`
  const a = ev('AgentDispatched', long, 1, { agentName: long })
  const b = ev('AgentDispatched', twin, 2, { agentName: twin })
  await s.append([a, b])
  t.same(
    (await s.query({ agent: long, limit: 10 })).map((e) => e.eventId),
    [a.eventId]
  )
  t.same(
    (await s.query({ agent: twin, limit: 10 })).map((e) => e.eventId),
    [b.eventId]
  )
  t.same(
    (await s.coordination(long)).map((e) => e.eventId),
    [a.eventId]
  )
  t.same(
    (await s.coordination(twin)).map((e) => e.eventId),
    [b.eventId]
  )
  await s.append([3, 4, 5].map((i) => ev('AgentDispatched', 'c', i, { agentName: 'z' })))
  t.same(indexKeys(f.env(), 'journal-by-agent'), ['z', 'z', 'z'], 'evicted with their digest keys')
  t.same(await s.query({ agent: long, limit: 10 }), [])
})

// A child appends through the real LMDB journal and reports each acknowledged batch; the parent
// kills it with SIGKILL. Every acknowledged event must be there, in order, when the store is reopened.
const child = `
const { Store } = await import(${JSON.stringify(new URL('../../dist/runtime/store/index.js', import.meta.url).href)})
const { LmdbJournalStore } = await import(${JSON.stringify(new URL('../../dist/runtime/fleet/lmdb-journal-store.js', import.meta.url).href)})
const journal = new LmdbJournalStore(new Store(process.argv[1]), 1000000)
for (let i = 0; ; i++) {
  const timestamp = new Date().toISOString()
  await journal.append([
    { eventId: 'd' + i, parentEventId: null, type: 'AgentDispatched', coordinationId: 'c', timestamp, agentName: 'a', skill: 'run' },
    { eventId: 'f' + i, parentEventId: 'd' + i, type: 'AgentCompleted', coordinationId: 'c', timestamp, agentName: 'a', skill: 'run', durationMs: 1 }
  ])
  process.stdout.write(i + '\\n')
}
`

t.test('lmdb: an acknowledged append survives SIGKILL of the writer', async (t) => {
  for (let round = 0; round < 2; round++) {
    const dir = tempDir(t, 'journal-kill')
    const acked = lastAcked(await killWriterAfter(child, dir, 40 + round * 100 + 1))
    t.ok(acked >= 40, `round ${round}: ${acked + 1} appends acknowledged before the kill`)
    const env = new Store(dir)
    const kept = (await new LmdbJournalStore(env, 1_000_000).coordination('c')).map((e) => e.eventId)
    t.same(
      kept.slice(0, 2 * (acked + 1)),
      Array.from({ length: acked + 1 }, (_, i) => [`d${i}`, `f${i}`]).flat(),
      `round ${round}: every acknowledged event is there, in order`
    )
    await env.close()
  }
})

t.test('lmdb: the bound must be a positive integer', async (t) => {
  const env = new Store(tempDir(t, 'journal-bound'))
  t.teardown(() => env.close())
  t.throws(() => new LmdbJournalStore(env, 0), { name: 'RangeError', message: 'maxEvents must be a positive integer' })
})
