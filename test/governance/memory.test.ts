import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import { startTestPlatform } from '../helpers/platform.js'
import { governanceOf, GovernanceMemorySink } from '../../runtime/governance/index.js'
import { aiRequest, type DecisionEntry } from '../../runtime/contracts/index.js'
import { MAX_LESSONS, namespacesOf } from '../../runtime/governance/memory-sink.js'
import { LmdbLessonStore, type Lesson, type LessonKey } from '../../runtime/governance/lesson-store.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const installGovernance = (p: Platform) => installAreas(p, [scopeArea, governanceArea])

const entry = (
  decision: DecisionEntry['decision'],
  snapshot: Record<string, unknown>,
  extra: Partial<DecisionEntry> = {}
): DecisionEntry => ({
  timestamp: new Date().toISOString(),
  policy_name: 'p',
  policy_source: 'yaml:x',
  policy_version: '1',
  decision,
  reason: 'because',
  evaluation_ms: 0.01,
  context_snapshot: snapshot,
  ...extra
})

t.test(
  'the sink keeps deny and prefer lessons per user, with provenance; TTL and confidence floor on read',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gov-mem-'))
    const store = new Store(dir)
    t.teardown(async () => {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    })
    let now = 1_000_000
    const sink = new GovernanceMemorySink(new LmdbLessonStore(store.db<Lesson, LessonKey>('m')), 60, 0, () => now)
    t.equal(sink.accept(entry('admit', { user_id: 'u' })), undefined, 'admits are not lessons')
    await sink.accept(entry('deny', { user_id: 'u' }))
    now += 1
    await sink.accept(entry('prefer', { user_id: 'u', preferred: 'Python 3' }, { reason: 'EOL' }))
    await sink.accept(entry('deny', { session_id: 's' }))
    const ls = await sink.recall('user:u')
    t.same(
      ls.map((l) => l.text),
      ['Prefer: Python 3 (EOL)', 'Denied by p: because'],
      'newest first'
    )
    t.same(ls[1]!.provenance, {
      policy: 'p',
      source: 'yaml:x',
      version: '1',
      decision: 'deny',
      timestamp: ls[1]!.provenance.timestamp
    })
    t.same(
      ls.map((l) => l.confidence),
      [0.7, 1]
    )
    t.equal((await sink.recall('session:s')).length, 1)
    t.equal((await sink.recall('user:other')).length, 0)
    const floor = new GovernanceMemorySink(new LmdbLessonStore(store.db<Lesson, LessonKey>('m')), 60, 0.8, () => now)
    t.same(
      (await floor.recall('user:u')).map((l) =>
        'decision' in l.provenance ? l.provenance.decision : l.provenance.source
      ),
      ['deny'],
      'below the floor dropped on read'
    )
    now += 61_000
    t.same(await sink.recall('user:u'), [], 'expired lessons dropped on read')
    const forever = new GovernanceMemorySink(new LmdbLessonStore(store.db<Lesson, LessonKey>('m2')), 0, 0, () => now)
    await forever.accept(entry('deny', { user_id: 'u' }))
    now += 1e12
    t.equal((await forever.recall('user:u')).length, 1, 'ttl 0 never expires')
  }
)

t.test('a lesson is kept under each namespace of its subject; an anonymous one under none', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gov-mem-ns-'))
  const store = new Store(dir)
  t.teardown(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const db = store.db<Lesson, LessonKey>('m')
  const sink = new GovernanceMemorySink(new LmdbLessonStore(db), 0, 0)
  t.same(namespacesOf({ user_id: 'u', conversation_id: 'c', session_id: 's' }), [
    'conversation:c',
    'session:s',
    'user:u'
  ])
  t.equal(sink.accept(entry('deny', { message: 'no subject' })), undefined, 'nothing to key an anonymous lesson by')
  await sink.accept(entry('deny', { user_id: 'u', conversation_id: 'c' }))
  t.same(
    await Promise.all(
      ['conversation:c', 'user:u', 'session:s', 'anonymous'].map(async (ns) => (await sink.recall(ns)).length)
    ),
    [1, 1, 0, 0]
  )
  t.equal((await sink.recall('conversation:c'))[0]!.namespace, 'conversation:c')
  t.equal([...db.getKeys()].length, 2, 'two writes, no shared bucket')
})

t.test("a write drops the namespace's expired lessons and those beyond MAX_LESSONS", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gov-mem-prune-'))
  const store = new Store(dir)
  t.teardown(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const db = store.db<Lesson, LessonKey>('m')
  let now = 1_000_000
  const short = new GovernanceMemorySink(new LmdbLessonStore(db), 1, 0, () => now)
  await short.accept(entry('deny', { user_id: 'u' }, { reason: 'old' }))
  const count = (ns: string): number => [...db.getKeys({ start: [ns, 0], end: [ns, Number.MAX_SAFE_INTEGER] })].length
  t.equal(count('user:u'), 1)
  now += 2000
  const forever = new GovernanceMemorySink(new LmdbLessonStore(db), 0, 0, () => now)
  await forever.accept(entry('deny', { user_id: 'u' }, { reason: 'new' }))
  t.equal(count('user:u'), 1, 'the expired lesson was removed from the store')
  for (let i = 0; i < MAX_LESSONS + 5; i++) {
    now++
    await forever.accept(entry('deny', { user_id: 'u' }, { reason: `r${i}` }))
  }
  t.equal(count('user:u'), MAX_LESSONS)
  t.equal((await forever.recall('user:u', 1))[0]!.text, `Denied by p: r${MAX_LESSONS + 4}`, 'the newest stay')
})

t.test('platform.ai.governance.memory.enabled persists lessons across restarts', async (t) => {
  const data = mkdtempSync(join(tmpdir(), 'gov-mem-p-'))
  const file = join(data, 'p.yaml')
  writeFileSync(file, 'policies:\n  - {name: no-x, type: deny-list, config: {phrases: [xyzzy]}}\n')
  const cfg = {
    'platform.data-dir': data,
    'platform.ai.governance.policy-files': [file],
    'platform.ai.governance.memory.enabled': true
  }
  const a = await startTestPlatform(cfg, { install: installGovernance })
  await governanceOf(a.platform)!.gate.admit('t', aiRequest({ message: 'say xyzzy', userId: 'mem-user' }))
  await new Promise((r) => setTimeout(r, 50))
  await a.close()
  const b = await startTestPlatform(cfg, { install: installGovernance })
  t.teardown(async () => {
    await b.close()
    rmSync(data, { recursive: true, force: true })
  })
  const lessons = await governanceOf(b.platform)!.memory!.recall('user:mem-user')
  t.same(
    lessons.map((l) => l.text),
    ['Denied by no-x: deny-list: request matched a denied phrase']
  )
  t.equal(governanceOf(b.platform)!.memory!.ttlSeconds, 0)
})

t.test('memory is off by default', async (t) => {
  const c = await startTestPlatform({}, { install: installGovernance })
  t.teardown(c.close)
  t.equal(governanceOf(c.platform)!.memory, undefined)
})

t.test(
  'operator facts: written with their provenance, listed with stable ids, removed by id within a namespace',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gov-mem-facts-'))
    const store = new Store(dir)
    t.teardown(async () => {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    })
    const db = store.db<Lesson, LessonKey>('m')
    let now = 2_000_000
    const sink = new GovernanceMemorySink(new LmdbLessonStore(db), 60, 0.5, () => now)
    await sink.accept(entry('deny', { user_id: 'u' }))
    now += 1
    const fact = await sink.add('user:u', 'Answers in metric units', 'alice')
    t.match(fact, {
      id: String,
      namespace: 'user:u',
      text: 'Answers in metric units',
      confidence: 1,
      expiresAt: now + 60_000,
      provenance: { source: 'operator', principal: 'alice', timestamp: fact.createdAt }
    })
    t.equal((await sink.add('user:u', 'soft', 'alice', 0.6)).confidence, 0.6, 'a given confidence is kept')
    const listed = await sink.recall('user:u')
    t.same(
      listed.map((l) => l.text),
      ['soft', 'Answers in metric units', 'Denied by p: because'],
      'newest first, beside the policy lessons'
    )
    t.equal(listed[1]!.id, fact.id, 'recall lists the id add answered')
    t.equal(new Set(listed.map((l) => l.id)).size, 3, 'every lesson has an id of its own')
    // a second sink on the same database (a restart) sees the same ids
    const again = new GovernanceMemorySink(new LmdbLessonStore(db), 60, 0.5, () => now)
    t.same(
      (await again.recall('user:u')).map((l) => l.id),
      listed.map((l) => l.id)
    )

    t.equal(await sink.remove('user:other', fact.id), false, "another namespace's id is unknown there")
    t.equal(await sink.remove('user:u', 'nonsense'), false)
    t.equal(await sink.remove('user:u', '1-2-3'), false)
    t.equal(await sink.remove('user:u', fact.id), true)
    t.equal(await sink.remove('user:u', fact.id), false, 'removed once')
    t.same(
      (await sink.recall('user:u')).map((l) => l.text),
      ['soft', 'Denied by p: because']
    )
    const policyLesson = (await sink.recall('user:u'))[1]!
    t.equal(await sink.remove('user:u', policyLesson.id), true, "a policy's lesson is removable too")

    now += 61_000
    const old = await sink.recall('user:u', 10)
    t.same(old, [], 'facts expire with the TTL like lessons')
    t.equal(await sink.remove('user:u', listed[0]!.id), false, 'an expired fact is unknown')
  }
)

t.test('operator facts have a per-namespace cap of their own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gov-mem-fcap-'))
  const store = new Store(dir)
  t.teardown(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const db = store.db<Lesson, LessonKey>('m')
  let now = 3_000_000
  const sink = new GovernanceMemorySink(new LmdbLessonStore(db), 0, 0, () => now)
  for (let i = 0; i < MAX_LESSONS + 3; i++) {
    now++
    await sink.add('user:u', `fact ${i}`, 'alice')
  }
  t.equal([...db.getKeys()].length, MAX_LESSONS)
  t.equal((await sink.recall('user:u', 1))[0]!.text, `fact ${MAX_LESSONS + 2}`, 'the newest stay')
  // policy lessons piling up under the user never bury a fact: the two are capped apart
  for (let i = 0; i < MAX_LESSONS + 3; i++) {
    now++
    await sink.accept(entry('deny', { user_id: 'u' }, { reason: `r${i}` }))
  }
  t.equal([...db.getKeys()].length, 2 * MAX_LESSONS)
  t.equal((await sink.facts('user:u', 1))[0]!.text, `fact ${MAX_LESSONS + 2}`)
  t.equal((await sink.lessons('user:u', 1))[0]!.text, `Denied by p: r${MAX_LESSONS + 2}`)
  t.same(
    (await sink.recall('user:u', 2)).map((l) => l.text),
    [`Denied by p: r${MAX_LESSONS + 2}`, `Denied by p: r${MAX_LESSONS + 1}`],
    'recall merges both, newest first'
  )
})
