// The A2A task stores under one contract: memory, LMDB (reopened on its directory: a restart) and a
// throwaway Postgres (a new pool on the same database: a restart).
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LocalTaskRecords } from '../../runtime/a2a/local-task-records.js'
import { PostgresTaskRecords } from '../../runtime/a2a/postgres-task-records.js'
import type { A2aTaskRecords } from '../../runtime/a2a/task-records.js'
import { PostgresDb, Store } from '../../runtime/store/index.js'
import { testPostgres } from '../helpers/postgres.js'
import { LIMITS, task, runTaskRecordsContract } from './task-records-contract.js'
import { rpc, start } from './a2a-helpers.js'

runTaskRecordsContract(t, 'memory', async () => ({
  async open(opts = {}) {
    const s = new LocalTaskRecords({ ...LIMITS, ...opts })
    await s.start()
    return s
  }
}))

runTaskRecordsContract(t, 'lmdb', async (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-a2a-tasks-'))
  let env: Store | undefined
  t.teardown(async () => {
    await env?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    async open(opts = {}) {
      await env?.close()
      env = new Store(dir)
      const s = new LocalTaskRecords({ ...LIMITS, ...opts }, env.db('a2a-tasks'))
      await s.start()
      return s
    }
  }
})

const pg = await testPostgres(t)
if (pg !== undefined)
  runTaskRecordsContract(t, 'postgres', async (t: Test) => {
    const url = await pg.database(t)
    const open: A2aTaskRecords[] = []
    const pools: PostgresDb[] = []
    t.teardown(async () => {
      await Promise.all(open.map((s) => s.stop()))
      await Promise.all(pools.map((p) => p.close()))
    })
    // each store on a pool of its own, as two nodes would be
    const db = async (): Promise<PostgresDb> => {
      const p = await PostgresDb.open({ url, poolSize: 2 })
      pools.push(p)
      return p
    }
    return {
      async open(opts = {}) {
        const s = new PostgresTaskRecords({ ...LIMITS, ...opts, db })
        open.push(s)
        await s.start()
        return s
      }
    }
  })

if (pg !== undefined)
  t.test('postgres: the running tasks of a lost node end FAILED once, and its late writes are refused', async (t) => {
    const url = await pg.database(t)
    const pools: PostgresDb[] = []
    const stores: PostgresTaskRecords[] = []
    t.teardown(async () => {
      await Promise.all(stores.map((s) => s.stop()))
      await Promise.all(pools.map((p) => p.close()))
    })
    // each node on a pool of its own; `gone` never renews: it stands for a node killed mid-task
    const node = async (name: string, leaseMs: number): Promise<PostgresTaskRecords> => {
      const s = new PostgresTaskRecords({
        ...LIMITS,
        node: name,
        leaseMs,
        db: async () => {
          const p = await PostgresDb.open({ url, poolSize: 2 })
          pools.push(p)
          return p
        }
      })
      stores.push(s)
      await s.start()
      return s
    }
    const gone = await node('node-gone', 100)
    const [b, c] = [await node('node-b', 60_000), await node('node-c', 60_000)]
    const now = Date.now()
    const working = await gone.create(task('alice', now, { node: 'node-gone' }), now)
    await gone.update({ ...working, state: 'TASK_STATE_WORKING', updatedAt: now + 1 })
    const submitted = await gone.create(task('alice', now, { node: 'node-gone' }), now)
    const done = await gone.create(task('alice', now, { node: 'node-gone' }), now)
    await gone.update({ ...done, state: 'TASK_STATE_COMPLETED', updatedAt: now + 1, endedAt: now + 1 })
    const alive = await b.create(task('bob', now, { node: 'node-b' }), now)
    // b and c sweep at the same time until both lapsed leases are found: each task is ended by one of them
    const ended: { id: string; from: string }[] = []
    // (a lease lapses on the database's clock: nothing to await but the sweep finding it)
    for (let i = 0; ended.length < 2 && i < 500; i++) {
      const found = await Promise.all([b.endLost(Date.now()), c.endLost(Date.now())])
      ended.push(...found.flat().map((x) => ({ id: x.task.id, from: x.from })))
      await new Promise((r) => setTimeout(r, 20))
    }
    t.same(
      ended.sort((x, y) => x.id.localeCompare(y.id)),
      [
        { id: working.id, from: 'TASK_STATE_WORKING' },
        { id: submitted.id, from: 'TASK_STATE_SUBMITTED' }
      ].sort((x, y) => x.id.localeCompare(y.id)),
      'each running task of the lost node ended exactly once'
    )
    t.same(await Promise.all([b.endLost(Date.now()), c.endLost(Date.now())]), [[], []], 'and never again')
    const kept = await c.get(working.id, Date.now())
    t.equal(kept?.state, 'TASK_STATE_FAILED')
    t.equal(kept?.statusMessage?.parts[0]?.text, 'interrupted: node lost')
    t.equal((await c.get(done.id, Date.now()))?.state, 'TASK_STATE_COMPLETED', 'a finished task keeps its end')
    t.equal((await c.get(alive.id, Date.now()))?.state, 'TASK_STATE_SUBMITTED', "a live node's task is left alone")
    // the lost node comes back (it was only cut off): its write is refused, its renewal says it lost the task
    const late = await gone.update({ ...working, state: 'TASK_STATE_COMPLETED', updatedAt: Date.now() })
    t.same([late?.written, late?.task.state], [false, 'TASK_STATE_FAILED'], 'the late write is refused')
    t.same(await gone.renew([working.id]), [working.id], 'the renewal tells it the task is no longer its own')
    t.same(await b.renew([alive.id]), [], 'a live lease is renewed')
  })

t.test('lmdb, on a platform: a task and its answer survive a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-a2a-restart-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const send = {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: 'm-restart', role: 'ROLE_USER', parts: [{ text: 'remember me' }] } }
  }
  const first = await start({ 'platform.data-dir': dir })
  const sent = (await rpc(`${first.url}/platform/agent/demo/a2a`, send)).body.result.task
  t.equal(sent.status.state, 'TASK_STATE_COMPLETED')
  await first.close()
  const again = await start({ 'platform.data-dir': dir })
  t.teardown(again.close)
  const got = await rpc(`${again.url}/platform/agent/demo/a2a`, {
    jsonrpc: '2.0',
    id: 2,
    method: 'GetTask',
    params: { id: sent.id }
  })
  t.equal(got.body.result.status.state, 'TASK_STATE_COMPLETED', 'read back after the restart')
  t.same(got.body.result.artifacts, sent.artifacts, 'with its answer')
})
