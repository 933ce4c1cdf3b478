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
import { LIMITS, runTaskRecordsContract } from './task-records-contract.js'
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
