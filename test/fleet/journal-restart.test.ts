// The fleet journals into LMDB by default: a coordination that ran is still there after a
// restart on the same data directory, and `memory` forgets it.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FLEET } from '../../runtime/fleet/index.js'
import { admin, ask, fleetPlatform } from './helpers.js'

async function coordinationAfterRestart(t: Test, store?: 'memory'): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleet-journal-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const settings = { 'platform.data-dir': dataDir, ...(store ? { 'platform.fleet.journal.store': store } : {}) }
  const first = await fleetPlatform(settings)
  const asked = await ask(first.url, 'boss', 'parallel', [{ agent: 'say', args: { message: 'x' } }, { agent: 'count' }])
  await first.platform.area(FLEET).journalSettled()
  t.equal((await admin(first.url, `/journal/${asked.coordinationId}`)).body.length, 6, 'journaled before the restart')
  await first.close()
  const second = await fleetPlatform(settings)
  t.teardown(second.close)
  const after = await admin(second.url, `/journal/${asked.coordinationId}`)
  return after.status === 200 ? after.body.length : 0
}

t.test('lmdb (the default store) keeps a coordination across a restart', async (t) => {
  t.equal(await coordinationAfterRestart(t), 6)
})

t.test('memory forgets it', async (t) => {
  t.equal(await coordinationAfterRestart(t, 'memory'), 0)
})
