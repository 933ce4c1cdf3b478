import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../runtime/areas.js'
import { storeFromConfig } from '../../runtime/interactions/store-from-config.js'
import { type InteractionStore } from '../../runtime/interactions/types.js'
import { startTestPlatform } from '../helpers/platform.js'
import { header, step } from './store-contract.js'

async function chosen(config: Record<string, unknown>): Promise<InteractionStore> {
  let store: InteractionStore | undefined
  const tp = await startTestPlatform(config, { install: (p) => void (store = storeFromConfig(p)) })
  t.teardown(tp.close)
  return store!
}

t.test('platform.interactions.store picks the store; lmdb by default', async (t) => {
  t.equal((await chosen({})).kind, 'lmdb', 'durable by default')
  t.equal((await chosen({ 'platform.interactions.store': 'memory' })).kind, 'memory')
  const pg = await chosen({
    'platform.interactions.store': 'postgres',
    'platform.interactions.postgres.url': 'postgres://u@127.0.0.1:5432/db',
    'platform.interactions.postgres.pool-size': 3
  })
  t.equal(pg.kind, 'postgres', 'chosen, not connected until started')
})

t.test('platform.interactions.lmdb.pack-ended packs ended runs into one record; off by default', async (t) => {
  for (const on of [false, true]) {
    let store: InteractionStore | undefined
    const tp = await startTestPlatform(
      { 'platform.interactions.lmdb.pack-ended': on },
      { install: (p) => void (store = storeFromConfig(p)) }
    )
    t.teardown(tp.close)
    await store!.start()
    await store!.save(header('int-cfg'))
    for (let i = 0; i < 3; i++) await store!.appendStep('int-cfg', step(i))
    await store!.appendStep('int-cfg', step(3, 'completion', 'done'))
    await store!.idle?.()
    const packed = tp.platform.store.db('interaction-steps-ended', { compress: true, shareStructures: true })
    t.equal(packed.get('int-cfg') !== undefined, on, on ? 'packed when on' : 'left in its step records by default')
    t.same(
      (await store!.load('int-cfg'))!.steps.map((x) => x.seq),
      [0, 1, 2, 3]
    )
  }
})

// the key reaches the store: a step made within the window after the last commit waits for it (or
// for another write), one made with the window at 0 is written as soon as the commit before landed
t.test('platform.interactions.lmdb.group-commit-ms is the least time between commits of streamed steps', async (t) => {
  for (const ms of [0, 1000]) {
    const store = await chosen({ 'platform.interactions.lmdb.group-commit-ms': ms })
    await store.start()
    await store.save(header('int-gc'))
    await store.appendStep('int-gc', step(0))
    let acked = false
    const second = store.appendStep('int-gc', step(1)).then(() => void (acked = true))
    if (ms === 0) await second
    else await new Promise((r) => setTimeout(r, 100))
    t.equal(acked, ms === 0, ms === 0 ? 'at 0 a step is written on its own' : 'held for the window')
    await store.appendStep('int-gc', step(2, 'completion', 'done'))
    await second
    t.same(
      (await store.load('int-gc'))!.steps.map((x) => x.seq),
      [0, 1, 2]
    )
  }
})

t.test('postgres without a url stops the start with an operator error naming the key', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-istore-config-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const err = await startTestPlatform(
    { 'platform.data-dir': dataDir, 'platform.interactions.store': 'postgres' },
    { install: (p) => void storeFromConfig(p) }
  ).then(
    (tp) => tp.close(),
    (e: unknown) => e
  )
  t.match(err, { code: 'PLT_ERR_CONFIG_INVALID' }, 'an operator code: the CLI prints one line and exits 78')
  t.match(
    (err as Error).message,
    /^platform\.postgres\.url \(or platform\.interactions\.postgres\.url\) is required when interactions are kept in PostgreSQL \(platform\.interactions\.store: postgres\)/
  )
})

t.test('bad values are refused by the config schema', async (t) => {
  const load = (overrides: Record<string, unknown>) => () => loadConfig({ env: {}, cwd: tmpdir(), overrides })
  t.throws(load({ 'platform.interactions.store': 'redis' }), /must be one of "memory", "lmdb", "postgres"/)
  t.throws(load({ 'platform.interactions.postgres.pool-size': 0 }), /postgres\.pool-size/)
  t.throws(load({ 'platform.interactions.postgres.url': '' }), /postgres\.url/)
  t.throws(load({ 'platform.interactions.lmdb.pack-ended': 'yes' }), /pack-ended/)
  t.throws(load({ 'platform.interactions.lmdb.group-commit-ms': -1 }), /group-commit-ms/)
  t.throws(load({ 'platform.interactions.lmdb.group-commit-ms': 5000 }), /group-commit-ms/)
  t.equal(loadConfig({ env: {}, cwd: tmpdir() }).get('platform.interactions.lmdb.group-commit-ms'), 10)
  t.equal(loadConfig({ env: {}, cwd: tmpdir() }).get('platform.interactions.postgres.pool-size'), 10)
})
