// RetainedLog: the ring buffer + LMDB log under the control audit log and the governance decision
// log. A failed LMDB write is reported (counted on /metrics and logged), never dropped.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, RetainedLog, type LogKey } from '../../runtime/store/index.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { type DecisionEntry as Decision } from '../../runtime/contracts/index.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import { startTestPlatform } from '../helpers/platform.js'

interface Item {
  n: number
  big?: bigint
}

const dir = mkdtempSync(join(tmpdir(), 'retained-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})

t.test('memory only: the newest entries, in both orders', async (t) => {
  const log = new RetainedLog<Item>({ name: 'mem', capacity: 3 })
  for (let n = 0; n < 5; n++) await log.append({ n })
  t.equal(log.size, 3)
  t.same(
    log.oldestFirst().map((i) => i.n),
    [2, 3, 4]
  )
  t.same(
    log.oldestFirst(2).map((i) => i.n),
    [3, 4]
  )
  t.same(
    log.newest(10).map((i) => i.n),
    [4, 3, 2]
  )
  t.same(
    log.stored(2).map((i) => i.n),
    [4, 3]
  )
})

t.test('LMDB: reads continue below the ring, and the sequence continues across a restart', async (t) => {
  const path = join(dir, 'restart')
  let store = new Store(path)
  let log = new RetainedLog<Item>({ name: 'restart', capacity: 3, db: store.db<Item, LogKey>('items') })
  for (let n = 0; n < 6; n++) await log.append({ n })
  t.same(
    log.newest(5).map((i) => i.n),
    [5, 4, 3, 2, 1],
    'past the ring from LMDB'
  )
  t.same(
    log.stored(10).map((i) => i.n),
    [5, 4, 3, 2, 1, 0]
  )
  const lastKey = [...store.db<Item, LogKey>('items').getKeys({ reverse: true, limit: 1 })][0]!
  await store.close()

  store = new Store(path)
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  log = new RetainedLog<Item>({ name: 'restart', capacity: 3, db })
  t.same(
    log.oldestFirst().map((i) => i.n),
    [3, 4, 5],
    'the ring is reloaded from LMDB'
  )
  await log.append({ n: 6 })
  const keys = [...db.getKeys({ reverse: true, limit: 1 })]
  t.equal(keys[0]![1], lastKey[1] + 1, 'the sequence continues after the last stored key')
  t.same(
    log.newest(7).map((i) => i.n),
    [6, 5, 4, 3, 2, 1, 0]
  )
})

t.test('a write the encoder rejects is reported, rejects the append and leaves the log working', async (t) => {
  const store = new Store(join(dir, 'fail'))
  t.teardown(() => store.close())
  const db = store.db<Item, LogKey>('items')
  const reports: [string, unknown][] = []
  const log = new RetainedLog<Item>({
    name: 'items',
    capacity: 10,
    db,
    onWriteFailure: (name, err) => {
      reports.push([name, err])
    }
  })
  // msgpack has no format for an integer past 64 bits: lmdb throws before queueing the write
  await t.rejects(log.append({ n: 1, big: 2n ** 70n }), /too large to fit in MessagePack/)
  t.equal(reports.length, 1)
  t.equal(reports[0]![0], 'items')
  t.match(String(reports[0]![1]), /too large to fit in MessagePack/)
  void log.append({ n: 2, big: 2n ** 71n })
  // the page is written once the current microtasks have run
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(reports.length, 2, 'reported even when nobody awaits the append')
  await log.append({ n: 3 })
  t.same(
    log.stored(10).map((i) => i.n),
    [3],
    'only the good entry is stored'
  )
  t.same(
    log.oldestFirst().map((i) => i.n),
    [1, 2, 3],
    'memory keeps what was appended'
  )
})

t.test('with nothing wired, a failed write is a process warning, not silence', async (t) => {
  const store = new Store(join(dir, 'warn'))
  t.teardown(() => store.close())
  const log = new RetainedLog<Item>({ name: 'unwired', capacity: 2, db: store.db<Item, LogKey>('items') })
  const warned = new Promise<Error>((resolve) => {
    process.once('warning', resolve)
  })
  void log.append({ n: 1, big: 2n ** 70n })
  const w = await warned
  t.equal(w.name, 'StoreWriteFailure')
  t.match(w.message, /store write failed \(unwired\): .*too large/)
})

/** The value of `platform_store_write_failures_total{log="<log>"}` on the platform's /metrics. */
async function failures(url: string, log: string): Promise<number | undefined> {
  const text = await (await fetch(url + '/metrics')).text()
  const m = new RegExp(`^platform_store_write_failures_total\\{log="${log}"\\} (\\d+)$`, 'm').exec(text)
  return m === null ? undefined : Number(m[1])
}

t.test('platform: failed audit and decision writes are counted on /metrics and logged with the error', async (t) => {
  const tp = await startTestPlatform(
    {},
    {
      install: async (p) => {
        await p.use(scopeArea)
        await p.use(governanceArea)
      }
    }
  )
  t.teardown(tp.close)
  t.equal(await failures(tp.url, 'decisions'), undefined, 'nothing failed yet')

  const decisions = governanceOf(tp.platform)!.decisionLog
  const bad: Decision = {
    timestamp: new Date().toISOString(),
    policy_name: 'p',
    policy_source: 'code:p',
    policy_version: '1',
    decision: 'admit',
    reason: 'r',
    evaluation_ms: 0,
    context_snapshot: { huge: 2n ** 70n }
  }
  t.doesNotThrow(() => {
    decisions.record(bad)
  }, 'a turn never sees the failure')
  t.equal(decisions.recent(1)[0], bad, 'the entry is still in memory')
  // its page is written once its window ends, or now for whoever waits (which never rejects)
  await decisions.written()
  t.equal(await failures(tp.url, 'decisions'), 1)

  // the audit entry's fields are strings by type; a symbol is the value msgpack cannot encode
  await t.rejects(
    tp.platform.audit.record('ops', 'plugins.reload', 'x', true, Symbol('not text') as unknown as string),
    /Unknown type: symbol/
  )
  t.equal(await failures(tp.url, 'audit'), 1)

  const lines = tp.logs.filter((l) => l.msg === 'store write failed')
  t.same(
    lines.map((l) => l.log),
    ['decisions', 'audit']
  )
  t.match(lines[0], { level: 50, err: { message: /too large to fit in MessagePack/ } })
  t.match(lines[1], { level: 50, err: { message: /Unknown type: symbol/ } })
})
