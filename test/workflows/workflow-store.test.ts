// The WorkflowStore contract on memory and LMDB (PostgreSQL: test/cluster/postgres-stores.test.ts);
// LMDB also across a restart.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import { MemoryWorkflowStore, LmdbWorkflowStore } from '../../runtime/workflows/workflow-store.js'
import type { WorkflowManifest } from '../../runtime/workflows/workflow-manifest.js'
import { conflict, manifest, runWorkflowStoreSuite } from './workflow-store-suite.js'

runWorkflowStoreSuite(t, 'memory', async () => new MemoryWorkflowStore())
runWorkflowStoreSuite(t, 'lmdb', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'workflows-'))
  const db = new Store(dir)
  t.teardown(async () => {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return new LmdbWorkflowStore(db.db<WorkflowManifest, string>('workflows'))
})

t.test('lmdb: workflows survive a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'workflows-restart-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db1 = new Store(dir)
  const s1 = new LmdbWorkflowStore(db1.db<WorkflowManifest, string>('workflows'))
  const saved = await s1.save(manifest('keep', 'Keep me', 1), 'alice')
  await db1.close()
  const db2 = new Store(dir)
  t.teardown(() => db2.close())
  const s2 = new LmdbWorkflowStore(db2.db<WorkflowManifest, string>('workflows'))
  t.same(await s2.find('keep'), saved)
  await t.rejects(s2.save(manifest('keep', 'x', 1), 'bob'), conflict('keep', 1, 1))
  t.match(await s2.save(manifest('keep', 'Kept', 2), 'bob'), { version: 2, createdBy: 'alice' })
})
