// One contract suite for both WorkflowStores; the LMDB one also across a restart.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import { MemoryWorkflowStore, LmdbWorkflowStore, type WorkflowStore } from '../../runtime/workflows/workflow-store.js'
import { parseManifest, type WorkflowManifest } from '../../runtime/workflows/workflow-manifest.js'
import { WORKFLOWS_ERRORS } from '../../runtime/workflows/errors.js'
import { isPlatformError } from '../../runtime/contracts/platform-error.js'

const manifest = (id: string, name: string, version: number) =>
  parseManifest({ id, name, version, nodes: [{ id: 'a', type: 'agent' }] })

/** The refusal a save at `sent` over `stored` meets. */
const conflict = (id: string, sent: number, stored: number) => ({
  code: 'PLT_ERR_WORKFLOW_VERSION_CONFLICT',
  message: `workflow ${id} version conflict: caller sent v${sent}, server has v${stored} (expected v${stored + 1})`,
  extra: { kind: 'VERSION_CONFLICT', storedVersion: stored }
})

const kinds: [string, () => { store: WorkflowStore; close: () => Promise<void> }][] = [
  ['memory', () => ({ store: new MemoryWorkflowStore(), close: async () => {} })],
  [
    'lmdb',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'workflows-'))
      const db = new Store(dir)
      return {
        store: new LmdbWorkflowStore(db.db<WorkflowManifest, string>('workflows')),
        close: async () => {
          await db.close()
          rmSync(dir, { recursive: true, force: true })
        }
      }
    }
  ]
]

for (const [kind, make] of kinds) {
  t.test(`${kind}: create at v1, update at stored + 1, conflicts otherwise, list by name, delete`, async (t) => {
    const { store, close } = make()
    t.teardown(close)
    await t.rejects(store.save(manifest('w1', 'Zeta', 2), 'alice'), conflict('w1', 2, 0), 'new: v1 only')
    const first = await store.save(manifest('w1', 'Zeta', 1), 'alice')
    t.match(first, { id: 'w1', version: 1, createdBy: 'alice' })
    t.equal(first.createdAt, first.updatedAt)
    await new Promise((r) => setTimeout(r, 5))
    const second = await store.save(manifest('w1', 'zeta two', 2), 'bob')
    t.match(second, { version: 2, name: 'zeta two', createdBy: 'alice', createdAt: first.createdAt })
    t.not(second.updatedAt, first.updatedAt)
    const err = await store.save(manifest('w1', 'stale', 2), 'bob').catch((e: unknown) => e)
    t.ok(isPlatformError(err, WORKFLOWS_ERRORS.WORKFLOW_VERSION_CONFLICT))
    t.equal(
      (err as Error).message,
      'workflow w1 version conflict: caller sent v2, server has v2 (expected v3)',
      'the message names the stored version'
    )
    t.equal(store.find('w1')!.name, 'zeta two', 'a conflict changes nothing')
    await store.save(manifest('w2', 'alpha', 1), 'alice')
    await store.save(manifest('w3', 'Beta', 1), 'alice')
    t.same(
      store.list().map((w) => w.id),
      ['w2', 'w3', 'w1'],
      'by lower-cased name'
    )
    t.equal(await store.delete('w2'), true)
    t.equal(await store.delete('w2'), false)
    t.equal(store.find('w2'), undefined)
    await t.rejects(store.save(manifest('w2', 'again', 2), 'alice'), conflict('w2', 2, 0), 'gone means v0')
  })

  t.test(`${kind}: of two racing saves of the same version exactly one wins`, async (t) => {
    const { store, close } = make()
    t.teardown(close)
    await store.save(manifest('w', 'w', 1), 'a')
    const results = await Promise.allSettled([
      store.save(manifest('w', 'left', 2), 'a'),
      store.save(manifest('w', 'right', 2), 'b')
    ])
    t.same(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'])
    t.equal(store.find('w')!.version, 2)
  })
}

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
  t.same(s2.find('keep'), saved)
  await t.rejects(s2.save(manifest('keep', 'x', 1), 'bob'), conflict('keep', 1, 1))
  t.match(await s2.save(manifest('keep', 'Kept', 2), 'bob'), { version: 2, createdBy: 'alice' })
})
