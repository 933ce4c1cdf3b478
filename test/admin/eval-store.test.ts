// The EvalRunStore contract on memory and LMDB (PostgreSQL: test/cluster/postgres-stores.test.ts);
// LMDB also across a restart.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import { MemoryEvalRunStore, LmdbEvalRunStore, type EvalIndexKey } from '../../runtime/admin/eval-run-store.js'
import type { EvalRun } from '../../runtime/admin/eval-run.js'
import { run, runEvalStoreSuite } from './eval-store-suite.js'

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

runEvalStoreSuite(t, 'memory', async (_t, cap) => new MemoryEvalRunStore(cap))
runEvalStoreSuite(t, 'lmdb', async (t, cap) => {
  const dir = mkdtempSync(join(tmpdir(), 'evals-'))
  const { store, db } = lmdb(dir, cap)
  t.teardown(async () => {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return store
})

t.test('lmdb: runs survive a restart, with the cap and immutability', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'evals-restart-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const first = lmdb(dir, 3)
  for (let i = 0; i < 3; i++) await first.store.save(run(`x${i}`, 'base', i))
  await first.db.close()
  const second = lmdb(dir, 3)
  t.teardown(() => second.db.close())
  t.same(
    (await second.store.list('base')).map((r) => r.id),
    ['x2', 'x1', 'x0']
  )
  await t.rejects(second.store.save(run('x1', 'base', 9)), {
    code: 'PLT_ERR_EVAL_RUN_EXISTS',
    message: 'EvalRun id x1 already exists; eval runs are immutable'
  })
  await second.store.save(run('x3', 'base', 3))
  t.same(
    (await second.store.list('base')).map((r) => r.id),
    ['x3', 'x2', 'x1'],
    'the cap holds after the restart'
  )
})
