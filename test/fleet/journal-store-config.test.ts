import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../runtime/areas.js'
import { journalStore } from '../../runtime/fleet/journal-store.js'
import { type JournalStore } from '../../runtime/fleet/fleet-types.js'
import { startTestPlatform } from '../helpers/platform.js'
import { ev } from './journal-store-suite.js'

type Chosen = JournalStore & { kind: string; maxEvents: number }

async function chosen(config: Record<string, unknown>): Promise<Chosen> {
  let store: Chosen | undefined
  const tp = await startTestPlatform(config, { install: async (p) => void (store = (await journalStore(p)) as Chosen) })
  t.teardown(tp.close)
  return store!
}

t.test('platform.fleet.journal.store picks the store, lmdb by default; max-events bounds it', async (t) => {
  const lmdb = await chosen({})
  t.equal(lmdb.kind, 'lmdb', 'durable by default')
  t.equal(lmdb.maxEvents, 100_000)
  const mem = await chosen({ 'platform.fleet.journal.store': 'memory', 'platform.fleet.journal.max-events': 7 })
  t.equal(mem.kind, 'memory')
  t.equal(mem.maxEvents, 7)
})

t.test('the lmdb journal of a platform is there after the platform restarts on its data directory', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-journal-restart-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const events = [ev('CoordinationStarted', 'c-r', 1, { coordinatorName: 'ops' })]
  let store: JournalStore | undefined
  const install = { install: async (p: Parameters<typeof journalStore>[0]) => void (store = await journalStore(p)) }
  const first = await startTestPlatform({ 'platform.data-dir': dataDir }, install)
  await store!.append(events)
  await first.close()
  const second = await startTestPlatform({ 'platform.data-dir': dataDir }, install)
  t.teardown(second.close)
  t.same(await store!.coordination('c-r'), events)
})

t.test('a typo in the journal keys stops the start with a message naming the key and the choices', async (t) => {
  const load = (overrides: Record<string, unknown>) => () => loadConfig({ env: {}, cwd: tmpdir(), overrides })
  t.throws(load({ 'platform.fleet.journal.store': 'lmbd' }), { code: 'PLT_ERR_CONFIG_INVALID' })
  t.throws(
    load({ 'platform.fleet.journal.store': 'lmbd' }),
    /platform\.fleet\.journal\.store.*must be one of "memory", "lmdb", "postgres"/
  )
  t.throws(load({ 'platform.fleet.journal.max-events': 0 }), /platform\.fleet\.journal\.max-events/)
  t.throws(load({ 'platform.fleet.journal.max-events': '10k' }), /platform\.fleet\.journal\.max-events/)
  t.throws(load({ 'platform.fleet.journal.flush-ms': -1 }), /platform\.fleet\.journal\.flush-ms/)
  t.throws(load({ 'platform.fleet.journal.flush-ms': 60_001 }), /platform\.fleet\.journal\.flush-ms/)
  t.equal(loadConfig({ env: {}, cwd: tmpdir() }).get('platform.fleet.journal.flush-ms'), 10)
  t.throws(load({ 'platform.fleet.journal.stor': 'memory' }), /platform\.fleet\.journal\.stor/, 'an unknown key too')
})
