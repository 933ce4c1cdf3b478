import t from 'tap'
import { PostgresInteractionStore } from '../../runtime/interactions/index.js'
import { testPostgres } from '../helpers/postgres.js'
import { header, runStoreContract, step } from './store-contract.js'
import { Client } from 'pg'

const pg = await testPostgres(t)

if (pg !== undefined) {
  // a fresh database per fixture; each open() is a new pool on it, as a restarted process opens
  runStoreContract(t, 'postgres', async (t) => {
    const url = await pg.database(t)
    let last: PostgresInteractionStore | undefined
    t.teardown(() => last?.stop())
    return {
      async open() {
        await last?.stop()
        return (last = new PostgresInteractionStore({ url, poolSize: 4 }))
      }
    }
  })

  t.test('postgres: the schema is created once, versioned, and a newer one is refused', async (t) => {
    const url = await pg.database(t)
    const first = new PostgresInteractionStore({ url, poolSize: 2 })
    await first.start()
    await first.save(header('int-v'))
    await first.appendStep('int-v', step(0))
    await first.stop()
    // two processes starting at once: the advisory lock serialises the migration
    const [a, b] = [
      new PostgresInteractionStore({ url, poolSize: 2 }),
      new PostgresInteractionStore({ url, poolSize: 2 })
    ]
    await Promise.all([a.start(), b.start()])
    t.equal((await a.load('int-v'))?.steps.length, 2, 'data kept; the restart added its terminal step once')
    await a.stop()
    await b.stop()
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const versions = await c.query('SELECT version FROM platform_interactions_schema ORDER BY version')
    t.same(versions.rows, [{ version: 1 }])
    const tables = await c.query(
      "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'platform_interaction%' ORDER BY 1"
    )
    t.same(
      tables.rows.map((r: { table_name: string }) => r.table_name),
      ['platform_interaction_steps', 'platform_interactions', 'platform_interactions_schema']
    )
    await c.query('INSERT INTO platform_interactions_schema (version) VALUES (99)')
    const newer = new PostgresInteractionStore({ url, poolSize: 2 })
    await t.rejects(newer.start(), /schema is at version 99, newer than this platform knows/)
    await t.rejects(newer.load('int-v'), /not started/, 'a store that failed to start stays closed')
  })

  t.test('postgres: an unreachable server fails start() with the reason', async (t) => {
    const s = new PostgresInteractionStore({ url: 'postgres://nobody@127.0.0.1:1/none', poolSize: 1 })
    await t.rejects(s.start(), /ECONNREFUSED/)
  })
}
