import t, { type Test } from 'tap'
import { createClient } from 'redis'
import type { SharedCounters } from '../../runtime/contracts/index.js'
import { RedisCounters } from '../../runtime/cluster/redis-counters.js'
import { createLogger } from '../../runtime/observability/index.js'
import { InProcessCounters } from '../../runtime/store/index.js'
import { testRedis } from '../helpers/redis.js'
import { until } from './backplane-contract.js'

/** What a counters test gives the contract: `node(id)` opens the counters of node `id` on one shared medium. */
interface CountersFixture {
  node(id: string): Promise<SharedCounters>
}

/** The counters contract, run unchanged against every implementation. */
function runCountersContract(t: Test, kind: string, make: (t: Test) => Promise<CountersFixture>): void {
  t.test(`${kind}: shared counters contract`, async (t) => {
    t.test('a window admits `limit` events per key across the nodes together, then refuses', async (t) => {
      const f = await make(t)
      const [a, b] = [await f.node('node-a'), await f.node('node-b')]
      t.equal(a.kind, kind)
      const wa = a.window('rl', 3, 60_000)
      const wb = b.window('rl', 3, 60_000)
      t.same(await wa.hit('alice'), { admitted: true, count: 1 })
      t.same(await wb.hit('alice'), { admitted: true, count: 2 })
      t.same(await wa.hit('alice', true), { admitted: true, count: 2 }, 'a peek answers without counting')
      t.same(await wb.hit('alice'), { admitted: true, count: 3 })
      t.same(await wa.hit('alice'), { admitted: false, count: 3 }, 'the fourth, on either node, is refused')
      t.same(await wb.hit('alice', true), { admitted: false, count: 3 })
      t.same(await wb.hit('bob'), { admitted: true, count: 1 }, 'another key counts alone')
      t.same(await a.window('other', 3, 60_000).hit('alice'), { admitted: true, count: 1 }, 'another name too')
    })

    t.test('events older than the window no longer count', async (t) => {
      const f = await make(t)
      const w = (await f.node('node-a')).window('short', 1, 50)
      t.same(await w.hit('k'), { admitted: true, count: 1 })
      t.equal((await w.hit('k')).admitted, false)
      let later = false
      for (let i = 0; i < 200 && !later; i++) {
        await new Promise((r) => setTimeout(r, 10))
        later = (await w.hit('k', true)).admitted
      }
      t.ok(later, 'admitted again once the window passed')
    })

    t.test('slots: at most `max` held per key across the nodes; a release frees one', async (t) => {
      const f = await make(t)
      const [a, b] = [await f.node('node-a'), await f.node('node-b')]
      const pa = a.slots('cc', 2)
      const pb = b.slots('cc', 2)
      t.same(await pa.acquire('alice', true), { acquired: true, held: 0 }, 'a peek takes nothing')
      t.same(await pa.acquire('alice'), { acquired: true, held: 1 })
      t.same(await pb.acquire('alice'), { acquired: true, held: 2 })
      t.same(await pa.acquire('alice'), { acquired: false, held: 2 }, 'the third is refused on either node')
      // in process, both nodes are the one process: what it holds is what either holds
      const one = a === b ? 1 : 0
      t.equal(pa.heldHere('alice'), 1 + one, 'held here')
      t.equal(pb.heldHere('alice'), 1 + one)
      t.equal(pa.heldHere('bob'), 0)
      pb.release('bob')
      t.same(await pb.acquire('alice', true), { acquired: false, held: 2 }, 'releasing a key not held frees nothing')
      pb.release('alice')
      t.equal(pb.heldHere('alice'), one, 'given back')
      let freed = false
      for (let i = 0; i < 200 && !freed; i++) {
        freed = (await pa.acquire('alice', true)).acquired
        if (!freed) await new Promise((r) => setTimeout(r, 10))
      }
      t.ok(freed, 'the released slot can be taken again')
      t.same(await pa.acquire('alice'), { acquired: true, held: 2 })
    })
  })
}

runCountersContract(t, 'in-process', async () => {
  // one process is one medium: every node of it counts on the same instance
  const counters = new InProcessCounters()
  return { node: async () => counters }
})

// one Redis for the whole file; each fixture's nodes use their own key prefix, so cases never share counts
const redis = await testRedis(t)
const logger = createLogger('silent')
let fixtures = 0

if (redis !== undefined) {
  const open = async (t: Test, node: string, extra: Partial<ConstructorParameters<typeof RedisCounters>[0]> = {}) => {
    const c = new RedisCounters({ url: redis.url, node, logger, prefix: `test${fixtures}:`, maxRetryMs: 100, ...extra })
    t.teardown(() => c.close())
    c.start()
    await until(() => c.available(), `${node} connected`)
    return c
  }

  runCountersContract(t, 'redis', async (t) => {
    fixtures++
    return { node: (id) => open(t, id) }
  })

  t.test('redis: a slot its node keeps renewing outlives its ttl; a dead node’s slot expires', async (t) => {
    fixtures++
    const a = await open(t, 'node-a', { slotTtlMs: 150 })
    const b = await open(t, 'node-b', { slotTtlMs: 150 })
    t.equal((await a.slots('cc', 1).acquire('alice')).acquired, true)
    // several ttls pass while a holds it: its renewals keep it
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 150))
      t.equal((await b.slots('cc', 1).acquire('alice', true)).acquired, false, 'still held by a')
    }
    // a slot written as a node that then died writes it: scored with an expiry nobody renews
    const raw = createClient({ url: redis.url })
    await raw.connect()
    t.teardown(() => raw.close())
    const key = `test${fixtures}:s:2:cc:bob`
    const [sec, micro] = await raw.time().then((r) => [Number(r[0]), Number(r[1])])
    await raw.zAdd(key, { score: sec * 1000 + Math.floor(micro / 1000) + 200, value: 'dead-node:0' })
    t.equal((await b.slots('cc', 1).acquire('bob', true)).acquired, false, 'the dead node’s slot counts a while')
    let freed = false
    for (let i = 0; i < 300 && !freed; i++) {
      freed = (await b.slots('cc', 1).acquire('bob', true)).acquired
      if (!freed) await new Promise((r) => setTimeout(r, 10))
    }
    t.ok(freed, 'then it expires and the slot is free')
  })

  t.test('redis: out of reach, every count rejects at once; back, counting resumes', async (t) => {
    fixtures++
    const a = await open(t, 'node-a')
    const w = a.window('rl', 5, 60_000)
    const p = a.slots('cc', 5)
    t.same(await w.hit('alice'), { admitted: true, count: 1 })
    t.equal((await p.acquire('alice')).acquired, true)
    await redis.stop()
    await until(() => !a.available(), 'a sees Redis gone')
    await t.rejects(Promise.resolve(w.hit('alice')), /cannot be reached/, 'a window hit rejects')
    await t.rejects(Promise.resolve(p.acquire('alice')), /cannot be reached/, 'an acquire rejects')
    t.doesNotThrow(() => p.release('alice'), 'a release does not throw (the slot expires instead)')
    await redis.start()
    await until(() => a.available(), 'a reconnected')
    t.same(await w.hit('fresh'), { admitted: true, count: 1 }, 'counting resumes (Redis restarted empty)')
  })
}
