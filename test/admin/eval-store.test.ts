// One contract suite for both EvalRunStores; the LMDB one also across a restart.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import {
  MemoryEvalRunStore,
  LmdbEvalRunStore,
  type EvalRunStore,
  type EvalIndexKey
} from '../../runtime/admin/eval-run-store.js'
import { parseEvalRun, type EvalRun } from '../../runtime/admin/eval-run.js'

const run = (id: string, baseline: string, second: number, passed = true): EvalRun =>
  parseEvalRun({ id, baseline, passed, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() })

function lmdb(dir: string, cap: number): { store: LmdbEvalRunStore; db: Store } {
  const db = new Store(dir)
  return {
    db,
    store: new LmdbEvalRunStore(
      db.db<EvalRun, string>('eval-runs'),
      db.db<true, EvalIndexKey>('eval-runs-by-baseline'),
      cap
    )
  }
}

const kinds: [string, (cap: number) => { store: EvalRunStore; close: () => Promise<void> }][] = [
  ['memory', (cap) => ({ store: new MemoryEvalRunStore(cap), close: async () => {} })],
  [
    'lmdb',
    (cap) => {
      const dir = mkdtempSync(join(tmpdir(), 'evals-'))
      const { store, db } = lmdb(dir, cap)
      return {
        store,
        close: async () => {
          await db.close()
          rmSync(dir, { recursive: true, force: true })
        }
      }
    }
  ]
]

for (const [kind, make] of kinds) {
  t.test(`${kind}: save, find, list newest first, per baseline, delete`, async (t) => {
    const { store, close } = make(500)
    t.teardown(close)
    await store.save(run('a1', 'alpha', 1))
    await store.save(run('b1', 'beta', 2, false))
    await store.save(run('a2', 'alpha', 3, false))
    t.same(
      store.list().map((r) => r.id),
      ['a2', 'b1', 'a1']
    )
    t.same(
      store.list('alpha').map((r) => r.id),
      ['a2', 'a1']
    )
    t.same(
      store.list(undefined, 1).map((r) => r.id),
      ['a2']
    )
    t.same(store.list('nobody'), [])
    t.same(store.find('b1'), run('b1', 'beta', 2, false))
    t.equal(store.find('zz'), undefined)
    await t.rejects(
      store.save(run('a1', 'gamma', 9)),
      { code: 'PLT_ERR_EVAL_RUN_EXISTS', message: 'EvalRun id a1 already exists; eval runs are immutable' },
      'runs are immutable'
    )
    t.equal(store.find('a1')!.baseline, 'alpha', 'the stored run is unchanged')
    t.same(store.baselines(), [
      {
        baseline: 'alpha',
        total: 2,
        passed: 1,
        passRate: 0.5,
        lastRunAt: '2026-01-01T00:00:03.000Z',
        lastVerdict: false
      },
      { baseline: 'beta', total: 1, passed: 0, passRate: 0, lastRunAt: '2026-01-01T00:00:02.000Z', lastVerdict: false }
    ])
    t.equal(await store.delete('a2'), true)
    t.equal(await store.delete('a2'), false)
    t.same(
      store.list('alpha').map((r) => r.id),
      ['a1']
    )
    t.match(store.baselines()[0], { baseline: 'alpha', total: 1, passed: 1, passRate: 1, lastVerdict: true })
  })

  t.test(`${kind}: keeps 500 runs per baseline, evicting the oldest by timestamp`, async (t) => {
    const { store, close } = make(500)
    t.teardown(close)
    // saved out of order: eviction goes by timestamp, not by arrival
    for (let i = 504; i >= 0; i--) await store.save(run(`r${i}`, 'big', i))
    await store.save(run('other', 'small', 0))
    t.equal(store.list('big', Infinity).length, 500)
    for (const gone of ['r0', 'r1', 'r2', 'r3', 'r4']) t.equal(store.find(gone), undefined, `${gone} evicted`)
    t.ok(store.find('r5'))
    t.ok(store.find('other'), 'another baseline keeps its own runs')
    t.equal(store.baselines()[0]!.total, 500)
    await store.save(run('r505', 'big', 505))
    t.equal(store.find('r5'), undefined, 'the next save evicts the next oldest')
    t.equal(store.list('big', Infinity).length, 500)
  })
}

t.test('lmdb: runs survive a restart, with the cap and immutability', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'evals-restart-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const first = lmdb(dir, 3)
  for (let i = 0; i < 3; i++) await first.store.save(run(`x${i}`, 'base', i))
  await first.db.close()
  const second = lmdb(dir, 3)
  t.teardown(() => second.db.close())
  t.same(
    second.store.list('base').map((r) => r.id),
    ['x2', 'x1', 'x0']
  )
  await t.rejects(second.store.save(run('x1', 'base', 9)), {
    code: 'PLT_ERR_EVAL_RUN_EXISTS',
    message: 'EvalRun id x1 already exists; eval runs are immutable'
  })
  await second.store.save(run('x3', 'base', 3))
  t.same(
    second.store.list('base').map((r) => r.id),
    ['x3', 'x2', 'x1'],
    'the cap holds after the restart'
  )
})
