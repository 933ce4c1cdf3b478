import t from 'tap'
import { killWriterAfter, lastAcked } from '../helpers/kill-writer.js'
import { PostgresInteractionStore } from '../../runtime/interactions/index.js'
import { MIGRATIONS } from '../../runtime/interactions/postgres-schema.js'
import { testPostgres } from '../helpers/postgres.js'
import { FIXTURE_NODE, header, runStoreContract, step } from './store-contract.js'
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
        return (last = new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 4 }))
      },
      async peer(node, opts) {
        return new PostgresInteractionStore({ url, node, poolSize: 4, ...opts })
      }
    }
  })

  t.test('postgres: the schema is created once, versioned, and a newer one is refused', async (t) => {
    const url = await pg.database(t)
    const first = new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 })
    await first.start()
    await first.save(header('int-v'))
    await first.appendStep('int-v', step(0))
    await first.stop()
    // two processes starting at once: the advisory lock serialises the migration
    const [a, b] = [
      new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 }),
      new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 })
    ]
    await Promise.all([a.start(), b.start()])
    t.equal((await a.load('int-v'))?.steps.length, 2, 'data kept; the restart added its terminal step once')
    await a.stop()
    await b.stop()
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const versions = await c.query('SELECT version FROM platform_interactions_schema ORDER BY version')
    t.same(versions.rows, [{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }])
    const tables = await c.query(
      "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'platform_interaction%' ORDER BY 1"
    )
    t.same(
      tables.rows.map((r: { table_name: string }) => r.table_name),
      [
        'platform_interaction_keys',
        'platform_interaction_steps',
        'platform_interactions',
        'platform_interactions_schema'
      ]
    )
    await c.query('INSERT INTO platform_interactions_schema (version) VALUES (99)')
    const newer = new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 })
    await t.rejects(newer.start(), /schema is at version 99, newer than this platform knows/)
    await t.rejects(newer.load('int-v'), /not started/, 'a store that failed to start stays closed')
  })

  t.test('postgres: a database at schema version 1 is migrated, its data kept, and takes keys', async (t) => {
    const url = await pg.database(t)
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    // what a platform of version 1 left behind
    await c.query(
      'CREATE TABLE platform_interactions_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())'
    )
    await c.query(MIGRATIONS[0]!)
    await c.query('INSERT INTO platform_interactions_schema (version) VALUES (1)')
    const h = header('int-v1', { status: 'COMPLETED' })
    await c.query(
      'INSERT INTO platform_interactions (id, user_id, conversation_id, status, created_at, header) VALUES ($1, $2, $3, $4, $5, $6)',
      [h.id, h.userId, h.conversationId, h.status, h.createdAt, JSON.stringify(h)]
    )
    const s = new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 })
    t.equal(await s.start(), 0)
    t.teardown(() => s.stop())
    t.same(await s.load('int-v1'), { ...h, steps: [] }, 'the old record is kept')
    const now = Date.now()
    t.equal(await s.saveKeyed(header('int-v2'), { key: 'k', fingerprint: 'fp', expiresAt: now + 1000 }, now), undefined)
    t.equal((await s.findKey('alice', 'k', now))?.interactionId, 'int-v2')
    const versions = await c.query('SELECT version FROM platform_interactions_schema ORDER BY version')
    t.same(
      versions.rows,
      [{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }],
      'versions 2 to 4 applied once, on top of 1'
    )
  })

  // the fence itself: another node took the run (its epoch moved on) while the row is still live
  t.test('postgres: a write carrying a stale lease epoch is refused, the run left as it is', async (t) => {
    const url = await pg.database(t)
    const s = new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 })
    await s.start()
    t.teardown(() => s.stop())
    await s.save(header('int-fenced'))
    await s.appendStep('int-fenced', step(0))
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const row = async () =>
      (await c.query("SELECT lease_epoch, owner_node FROM platform_interactions WHERE id = 'int-fenced'")).rows[0]
    t.same(await row(), { lease_epoch: '1', owner_node: FIXTURE_NODE }, 'the saving node holds epoch 1')
    await c.query("UPDATE platform_interactions SET lease_epoch = 2, owner_node = 'node-b' WHERE id = 'int-fenced'")
    const ENDED = { code: 'PLT_ERR_INTERACTION_ENDED' }
    await t.rejects(s.appendStep('int-fenced', step(1)), ENDED, 'a step of the old owner')
    await t.rejects(s.appendStep('int-fenced', step(1, 'completion', 'late')), ENDED, 'its terminal step')
    await t.rejects(s.save({ ...header('int-fenced'), status: 'COMPLETED' }), ENDED, 'its terminal header')
    const got = (await s.load('int-fenced'))!
    t.equal(got.status, 'RUNNING', 'the run is the new owner’s, untouched')
    t.same(
      got.steps.map((x) => x.seq),
      [0]
    )
    t.same(await row(), { lease_epoch: '2', owner_node: 'node-b' })
  })

  // the same SIGKILL check as LMDB's: a child appends and prints each acknowledged seq
  const child = `
const { PostgresInteractionStore } = await import(${JSON.stringify(new URL('../../dist/runtime/interactions/index.js', import.meta.url).href)})
const s = new PostgresInteractionStore({ url: process.argv[1], node: 'node-a', poolSize: 4 })
await s.start()
const at = new Date().toISOString()
await s.save({ id: 'int-kill', parentId: null, conversationId: 'c', agentId: null, userId: 'u', model: null,
  status: 'RUNNING', background: true, store: true, finalText: null, usage: null, errorMessage: null,
  createdAt: at, updatedAt: at })
for (let seq = 0; ; seq++) {
  await s.appendStep('int-kill', { seq, type: 'text', text: 'delta ' + seq, toolName: null, data: {}, usage: null,
    createdAt: new Date().toISOString() })
  process.stdout.write(seq + '\\n')
}
`

  t.test('postgres: an acknowledged step survives SIGKILL of the writer', async (t) => {
    const url = await pg.database(t)
    const acked = lastAcked(await killWriterAfter(child, url, 60 + 1))
    t.ok(acked >= 60, `${acked + 1} steps acknowledged before the kill`)
    const s = new PostgresInteractionStore({ url, node: FIXTURE_NODE, poolSize: 2 })
    t.equal(await s.start(), 1, 'the killed run is marked')
    t.teardown(() => s.stop())
    const run = (await s.load('int-kill'))!
    const seqs = run.steps.map((x) => x.seq)
    t.same(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i),
      'no gap'
    )
    t.ok(seqs.length >= acked + 2, 'every acknowledged step, then the terminal one')
    t.equal(run.status, 'FAILED')
    t.equal(run.steps.at(-1)!.type, 'error')
  })

  t.test('postgres: an unreachable server fails start() with the reason', async (t) => {
    const s = new PostgresInteractionStore({
      url: 'postgres://nobody@127.0.0.1:1/none',
      node: FIXTURE_NODE,
      poolSize: 1
    })
    await t.rejects(s.start(), /ECONNREFUSED/)
  })
}
