// The EvalRunStore contract, run against every store (memory, LMDB, PostgreSQL).
import type { Test } from 'tap'
import type { EvalRunStore } from '../../runtime/admin/eval-run-store.js'
import { parseEvalRun, type EvalRun } from '../../runtime/admin/eval-run.js'

export const run = (id: string, baseline: string, second: number, passed = true): EvalRun =>
  parseEvalRun({ id, baseline, passed, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() })

const ids = (runs: EvalRun[]): string[] => runs.map((r) => r.id)

/** `make(t, cap)` returns a fresh, empty store keeping `cap` runs per baseline, closed when `t` ends. */
export function runEvalStoreSuite(t: Test, kind: string, make: (t: Test, cap: number) => Promise<EvalRunStore>): void {
  t.test(`${kind}: save, find, list newest first, per baseline, delete`, async (t) => {
    const store = await make(t, 500)
    await store.save(run('a1', 'alpha', 1))
    await store.save(run('b1', 'beta', 2, false))
    await store.save(run('a2', 'alpha', 3, false))
    t.same(ids(await store.list()), ['a2', 'b1', 'a1'])
    t.same(ids(await store.list('alpha')), ['a2', 'a1'])
    t.same(ids(await store.list(undefined, 1)), ['a2'])
    t.same(await store.list('nobody'), [])
    t.same(await store.find('b1'), run('b1', 'beta', 2, false))
    t.equal(await store.find('zz'), undefined)
    await t.rejects(
      store.save(run('a1', 'gamma', 9)),
      { code: 'PLT_ERR_EVAL_RUN_EXISTS', message: 'EvalRun id a1 already exists; eval runs are immutable' },
      'runs are immutable'
    )
    t.equal((await store.find('a1'))!.baseline, 'alpha', 'the stored run is unchanged')
    t.same(await store.baselines(), [
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
    t.same(ids(await store.list('alpha')), ['a1'])
    t.match((await store.baselines())[0], { baseline: 'alpha', total: 1, passed: 1, passRate: 1, lastVerdict: true })
  })

  t.test(`${kind}: keeps the cap of runs per baseline, evicting the oldest by timestamp`, async (t) => {
    const store = await make(t, 50)
    // saved out of order: eviction goes by timestamp, not by arrival
    for (let i = 54; i >= 0; i--) await store.save(run(`r${i}`, 'big', i))
    await store.save(run('other', 'small', 0))
    t.equal((await store.list('big', Infinity)).length, 50)
    for (const gone of ['r0', 'r1', 'r2', 'r3', 'r4']) t.equal(await store.find(gone), undefined, `${gone} evicted`)
    t.ok(await store.find('r5'))
    t.ok(await store.find('other'), 'another baseline keeps its own runs')
    t.equal((await store.baselines())[0]!.total, 50)
    await store.save(run('r55', 'big', 55))
    t.equal(await store.find('r5'), undefined, 'the next save evicts the next oldest')
    t.equal((await store.list('big', Infinity)).length, 50)
  })
}
