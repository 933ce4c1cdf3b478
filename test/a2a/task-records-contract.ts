// The contract every A2A task store meets (memory, LMDB, Postgres): one suite, run on each.
import type { Test } from 'tap'
import type { A2aTaskRecords, NewTask, TaskRecordsOptions } from '../../runtime/a2a/task-records.js'
import { A2A_ERRORS } from '../../runtime/a2a/errors.js'

export const NODE = 'node-a'

export const LIMITS: TaskRecordsOptions = {
  node: NODE,
  limits: { max: 6, perPrincipal: 3, perAddress: 2, reserve: 2 },
  retentionMs: 60_000,
  push: { perTask: 2, perCaller: 3 }
}

export interface Fixture {
  /** A started store; opened again on the same data it stands for a restart of the node. */
  open(opts?: Partial<TaskRecordsOptions>): Promise<A2aTaskRecords>
}

let n = 0
export function task(principal: string | null, at: number, over: Partial<NewTask> = {}): NewTask {
  const id = `task-${process.pid}-${n++}`
  return {
    id,
    contextId: over.contextId ?? `ctx-${id}`,
    agent: 'helper',
    owner: principal ?? 'anonymous',
    caller: principal === null ? { principal: null, address: '127.0.0.1' } : { principal },
    node: NODE,
    createdAt: at,
    state: 'TASK_STATE_SUBMITTED',
    updatedAt: at,
    history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: 'hi' }], taskId: id, contextId: `ctx-${id}` }],
    artifacts: [],
    metadata: {},
    push: [],
    ...over
  }
}

const QUOTA = { code: A2A_ERRORS.A2A_TASK_QUOTA.code }
const CAPACITY = { code: A2A_ERRORS.A2A_TASK_CAPACITY.code }
const PARAMS = { code: A2A_ERRORS.A2A_INVALID_PARAMS.code }

export function runTaskRecordsContract(t: Test, name: string, fixture: (t: Test) => Promise<Fixture>): void {
  t.test(`${name}: a task is kept, read, updated and listed newest first`, async (t) => {
    const s = await (await fixture(t)).open()
    const a = await s.create(task('alice', 1000), 1000)
    const b = await s.create(task('alice', 1001), 1001)
    t.ok(b.seq > a.seq, 'the store numbers tasks in creation order')
    t.same((await s.get(a.id, 1002))?.history[0]?.parts, [{ text: 'hi' }])
    t.equal(await s.get('nope', 1002), undefined)
    const working = { ...a, state: 'TASK_STATE_WORKING' as const, updatedAt: 1005, metadata: { k: 1 } }
    t.same((await s.update(working))?.written, true)
    t.equal((await s.get(a.id, 1006))?.state, 'TASK_STATE_WORKING')
    t.same((await s.get(a.id, 1006))?.metadata, { k: 1 })
    const page = await s.list({ agent: 'helper', viewer: { principal: 'alice', all: false }, pageSize: 1 }, 1006)
    t.same(
      page.tasks.map((x) => x.id),
      [a.id],
      'the most recently updated first'
    )
    t.equal(page.totalSize, 2)
    const next = await s.list(
      { agent: 'helper', viewer: { principal: 'alice', all: false }, pageSize: 1, pageToken: page.nextPageToken },
      1006
    )
    t.same(
      next.tasks.map((x) => x.id),
      [b.id]
    )
    t.equal(next.nextPageToken, '')
    t.same((await s.list({ agent: 'helper', viewer: { principal: 'bob', all: false }, pageSize: 5 }, 1006)).tasks, [])
    t.same((await s.list({ agent: 'other', viewer: { principal: 'alice', all: true }, pageSize: 5 }, 1006)).tasks, [])
    t.same(
      (await s.list({ agent: 'helper', viewer: { principal: null, all: false }, pageSize: 5 }, 1006)).tasks,
      [],
      'an anonymous caller lists none'
    )
    t.equal(
      (
        await s.list(
          { agent: 'helper', viewer: { principal: 'alice', all: false }, pageSize: 5, status: 'TASK_STATE_WORKING' },
          1006
        )
      ).totalSize,
      1
    )
    t.same(
      (await s.all(a.contextId, 1006)).map((x) => x.id),
      [a.id]
    )
  })

  t.test(`${name}: an ended task takes no further write, and a cancel only ends a running one`, async (t) => {
    const s = await (await fixture(t)).open()
    const a = await s.create(task('alice', 1000), 1000)
    const c = await s.cancel(a.id, 'Canceled by request', 1001)
    t.equal(c?.canceled, true)
    t.equal(c?.from, 'TASK_STATE_SUBMITTED')
    t.equal(c?.task.state, 'TASK_STATE_CANCELED')
    t.equal(c?.task.statusMessage?.parts[0]?.text, 'Canceled by request')
    const late = await s.update({ ...a, state: 'TASK_STATE_COMPLETED', updatedAt: 1002 })
    t.equal(late?.written, false, 'the running node learns the task ended elsewhere')
    t.equal(late?.task.state, 'TASK_STATE_CANCELED')
    t.equal((await s.cancel(a.id, 'again', 1003))?.canceled, false)
    t.equal(await s.cancel('nope', 'x', 1003), undefined)
    t.equal(await s.update({ ...a, id: 'nope' }), undefined)
  })

  t.test(`${name}: per-owner bounds make room from the owner's own finished tasks`, async (t) => {
    const s = await (await fixture(t)).open()
    const mine = [
      await s.create(task('alice', 1000), 1000),
      await s.create(task('alice', 1001), 1001),
      await s.create(task('alice', 1002), 1002)
    ]
    await t.rejects(s.create(task('alice', 1003), 1003), QUOTA, 'all three still run')
    t.equal(s.size, 3, 'a refusal changes nothing')
    await s.update({ ...mine[1]!, state: 'TASK_STATE_COMPLETED', updatedAt: 1004, endedAt: 1004 })
    await s.update({ ...mine[0]!, state: 'TASK_STATE_COMPLETED', updatedAt: 1005, endedAt: 1005 })
    await s.create(task('alice', 1006), 1006)
    t.equal(await s.get(mine[1]!.id, 1006), undefined, 'the oldest finished went first')
    t.ok(await s.get(mine[0]!.id, 1006), 'the other finished one is kept')
    // anonymous callers from one address: two; then the pool leaves the reserve
    await s.create(task(null, 1007), 1007)
    await s.create(task(null, 1008), 1008)
    await t.rejects(s.create(task(null, 1009), 1009), QUOTA)
    await s.create(task('bob', 1010), 1010)
    await t.rejects(s.create(task('carol', 1011), 1011), CAPACITY, 'the cap, and nothing of carol finished')
  })

  t.test(`${name}: finished tasks are forgotten after their retention`, async (t) => {
    const s = await (await fixture(t)).open({ retentionMs: 100 })
    const a = await s.create(task('alice', 1000), 1000)
    const b = await s.create(task('alice', 1000), 1000)
    await s.update({ ...a, state: 'TASK_STATE_FAILED', updatedAt: 1001, endedAt: 1001 })
    t.equal(await s.get(a.id, 1200), undefined, 'terminal and past its retention')
    t.ok(await s.get(b.id, 1200), 'a running task is kept whatever its age')
    await s.sweep(1200)
    t.equal(s.size, 1)
  })

  t.test(`${name}: push configs go with the task, bounded per task and per caller`, async (t) => {
    const s = await (await fixture(t)).open()
    const a = await s.create(task('alice', 1000, {}), 1000)
    const cfg = (id: string, taskId = a.id) => ({ id, taskId, url: 'http://127.0.0.1:1/hook', version: '1.0' as const })
    t.match(await s.setPush(cfg('one')), cfg('one'))
    await s.setPush({ ...cfg('one'), token: 'tok' })
    t.match((await s.get(a.id, 1001))?.push, [{ ...cfg('one'), token: 'tok' }], 'replaced, not added')
    t.equal((await s.get(a.id, 1001))?.push.length, 1)
    await s.setPush(cfg('two'))
    await t.rejects(s.setPush(cfg('three')), PARAMS, 'the per-task limit')
    const b = await s.create(task('alice', 1001, { push: [cfg('b1', 'x')].map((c) => ({ ...c })) }), 1001)
    t.equal(await s.pushCount('alice'), 3)
    await t.rejects(s.setPush(cfg('b2', b.id)), PARAMS, 'the per-caller limit, over all its tasks')
    // a write of the running node never takes a config away
    await s.update({ ...a, push: [], state: 'TASK_STATE_WORKING', updatedAt: 1002 })
    t.equal((await s.get(a.id, 1003))?.push.length, 2)
    t.equal(await s.deletePush(a.id, 'one'), true)
    t.equal(await s.deletePush(a.id, 'one'), false)
    t.equal(await s.pushCount('alice'), 2)
    t.equal(await s.setPush(cfg('z', 'nope')), undefined)
  })

  t.test(`${name}: a restart fails this node's running tasks and keeps the rest`, async (t) => {
    const f = await fixture(t)
    const s = await f.open()
    const running = await s.create(task('alice', Date.now()), Date.now())
    const done = await s.create(task('alice', Date.now()), Date.now())
    await s.update({ ...done, state: 'TASK_STATE_COMPLETED', updatedAt: Date.now(), endedAt: Date.now() })
    const again = await f.open()
    t.equal(again.kind, s.kind)
    const r = await again.get(running.id, Date.now())
    if (s.kind === 'memory') {
      t.equal(r, undefined, 'memory keeps nothing over a restart')
      return
    }
    t.equal(r?.state, 'TASK_STATE_FAILED')
    t.equal(r?.statusMessage?.parts[0]?.text, 'interrupted: server restarted')
    t.equal((await again.get(done.id, Date.now()))?.state, 'TASK_STATE_COMPLETED')
    const next = await again.create(task('alice', Date.now()), Date.now())
    t.ok(next.seq > done.seq, 'numbering goes on after a restart')
  })
}
