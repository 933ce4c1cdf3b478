import type { Test } from 'tap'
import type { SharedCounters } from '../../runtime/contracts/index.js'

/** What a counters test gives the contract: `node(id)` opens the counters of node `id` on one shared medium. */
export interface CountersFixture {
  node(id: string): Promise<SharedCounters>
}

/** The counters contract, run unchanged against every implementation. */
export function runCountersContract(t: Test, kind: string, make: (t: Test) => Promise<CountersFixture>): void {
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

    t.test('a budget: `capacity` units across the nodes together; a refused take spends nothing', async (t) => {
      const f = await make(t)
      const [a, b] = [await f.node('node-a'), await f.node('node-b')]
      // 100 units per 10 minutes: one unit comes back every 6 s, nothing within the test
      const ba = a.budget('bytes', 100, 600_000)
      const bb = b.budget('bytes', 100, 600_000)
      t.same(await ba.take('alice', 60), { taken: true, waitMs: 0 })
      const over = await bb.take('alice', 60)
      t.equal(over.taken, false, 'what is left, on the other node, is too little')
      t.ok(over.waitMs > 100_000 && over.waitMs <= 120_000, `the wait is the time 20 units take: ${over.waitMs} ms`)
      t.same(await bb.take('alice', 40), { taken: true, waitMs: 0 }, 'the refusal spent nothing')
      t.same(await ba.take('bob', 100), { taken: true, waitMs: 0 }, 'another key has its own')
      t.same(await a.budget('other', 100, 600_000).take('alice', 100), { taken: true, waitMs: 0 }, 'another name too')
      t.equal((await ba.take('carol', 1_000)).taken, true, 'a cost above the capacity takes the whole budget')
      t.equal((await bb.take('carol', 1)).taken, false)
    })

    t.test('a budget refills over time', async (t) => {
      const f = await make(t)
      const budget = (await f.node('node-a')).budget('fast', 10, 100)
      t.equal((await budget.take('k', 10)).taken, true)
      t.equal((await budget.take('k', 10)).taken, false)
      let refilled = false
      for (let i = 0; i < 200 && !refilled; i++) {
        await new Promise((r) => setTimeout(r, 10))
        refilled = (await budget.take('k', 10)).taken
      }
      t.ok(refilled, 'taken again once the budget refilled')
    })
  })
}
