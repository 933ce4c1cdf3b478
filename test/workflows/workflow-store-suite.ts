// The WorkflowStore contract, run against every store (memory, LMDB, PostgreSQL).
import type { Test } from 'tap'
import type { WorkflowStore } from '../../runtime/workflows/workflow-store.js'
import { parseManifest } from '../../runtime/workflows/workflow-manifest.js'
import { WORKFLOWS_ERRORS } from '../../runtime/workflows/errors.js'
import { isPlatformError } from '../../runtime/contracts/platform-error.js'

export const manifest = (id: string, name: string, version: number) =>
  parseManifest({ id, name, version, nodes: [{ id: 'a', type: 'agent' }] })

/** The refusal a save at `sent` over `stored` meets. */
export const conflict = (id: string, sent: number, stored: number) => ({
  code: 'PLT_ERR_WORKFLOW_VERSION_CONFLICT',
  message: `workflow ${id} version conflict: caller sent v${sent}, server has v${stored} (expected v${stored + 1})`,
  extra: { kind: 'VERSION_CONFLICT', storedVersion: stored }
})

/** `make(t)` returns a fresh, empty store, closed when `t` ends. */
export function runWorkflowStoreSuite(t: Test, kind: string, make: (t: Test) => Promise<WorkflowStore>): void {
  t.test(`${kind}: create at v1, update at stored + 1, conflicts otherwise, list by name, delete`, async (t) => {
    const store = await make(t)
    await t.rejects(store.save(manifest('w1', 'Zeta', 2), 'alice'), conflict('w1', 2, 0), 'new: v1 only')
    const first = await store.save(manifest('w1', 'Zeta', 1), 'alice')
    t.match(first, { id: 'w1', version: 1, createdBy: 'alice' })
    t.equal(first.createdAt, first.updatedAt)
    await new Promise((r) => setTimeout(r, 5))
    const second = await store.save(manifest('w1', 'zeta two', 2), 'bob')
    t.match(second, { version: 2, name: 'zeta two', createdBy: 'alice', createdAt: first.createdAt })
    t.not(second.updatedAt, first.updatedAt)
    t.same(await store.find('w1'), second, 'find answers what save stored')
    const err = await store.save(manifest('w1', 'stale', 2), 'bob').catch((e: unknown) => e)
    t.ok(isPlatformError(err, WORKFLOWS_ERRORS.WORKFLOW_VERSION_CONFLICT))
    t.equal(
      (err as Error).message,
      'workflow w1 version conflict: caller sent v2, server has v2 (expected v3)',
      'the message names the stored version'
    )
    t.equal((await store.find('w1'))!.name, 'zeta two', 'a conflict changes nothing')
    await store.save(manifest('w2', 'alpha', 1), 'alice')
    await store.save(manifest('w3', 'Beta', 1), 'alice')
    t.same(
      (await store.list()).map((w) => w.id),
      ['w2', 'w3', 'w1'],
      'by lower-cased name'
    )
    t.equal(await store.delete('w2'), true)
    t.equal(await store.delete('w2'), false)
    t.equal(await store.find('w2'), undefined)
    await t.rejects(store.save(manifest('w2', 'again', 2), 'alice'), conflict('w2', 2, 0), 'gone means v0')
  })

  t.test(`${kind}: of two racing saves of the same version exactly one wins`, async (t) => {
    const store = await make(t)
    const first = await Promise.allSettled([
      store.save(manifest('w', 'one', 1), 'a'),
      store.save(manifest('w', 'two', 1), 'b')
    ])
    t.same(first.map((r) => r.status).sort(), ['fulfilled', 'rejected'], 'two first saves: one creates')
    const results = await Promise.allSettled([
      store.save(manifest('w', 'left', 2), 'a'),
      store.save(manifest('w', 'right', 2), 'b')
    ])
    t.same(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'])
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    t.match(lost.reason, conflict('w', 2, 2), 'the loser is told the version that won')
    const won = results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ name: string }>
    t.match(await store.find('w'), { version: 2, name: won.value.name })
  })
}
