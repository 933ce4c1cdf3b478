import type { Test } from 'tap'
import type { Backplane } from '../../runtime/contracts/index.js'

/** What a backplane test gives the contract: `node(id)` opens a backplane of node `id` on one shared medium. */
export interface BackplaneFixture {
  node(id: string): Promise<Backplane>
}

/** Resolves once `check` holds, polling; the contract never asserts on time. */
export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`never happened: ${what}`)
}

/**
 * Publishes on `topic` from `from` until `seen()` says a message arrived: a subscription on a
 * network backplane takes effect some time after `subscribe` returns, and pub/sub keeps nothing.
 */
export async function publishUntilSeen(from: Backplane, topic: string, seen: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !seen(); i++) {
    from.publish(topic, { probe: i })
    await new Promise((r) => setTimeout(r, 10))
  }
  if (!seen()) throw new Error(`no message on ${topic} ever arrived`)
}

/** The backplane contract, run unchanged against every implementation. */
export function runBackplaneContract(t: Test, kind: string, make: (t: Test) => Promise<BackplaneFixture>): void {
  t.test(`${kind}: backplane contract`, async (t) => {
    t.test('a message reaches the other nodes subscribed to its topic, with its sender, in order', async (t) => {
      const f = await make(t)
      const [a, b, c] = [await f.node('node-a'), await f.node('node-b'), await f.node('node-c')]
      t.equal(a.kind, kind)
      t.equal(a.node, 'node-a')
      const atB: [unknown, string][] = []
      const atC: unknown[] = []
      b.subscribe('room.lobby', (d, from) => atB.push([d, from]))
      c.subscribe('room.other', (d) => atC.push(d))
      await publishUntilSeen(a, 'room.lobby', () => atB.length > 0)
      atB.length = 0
      for (let i = 0; i < 50; i++) a.publish('room.lobby', { i, text: `m${i}`, deep: { ok: true } })
      // probes still in flight may land after the reset: only the numbered messages count
      const numbered = () => atB.filter(([d]) => (d as { i?: number }).i !== undefined)
      await until(() => numbered().length === 50, '50 messages at b')
      t.same(
        numbered().map(([d]) => (d as { i: number }).i),
        Array.from({ length: 50 }, (_, i) => i),
        'per-sender order kept'
      )
      t.same(numbered()[7], [{ i: 7, text: 'm7', deep: { ok: true } }, 'node-a'], 'data and sender')
      t.same(atC, [], 'another topic hears nothing')
    })

    t.test("a node's own messages are not echoed back to it", async (t) => {
      const f = await make(t)
      const [a, b] = [await f.node('node-a'), await f.node('node-b')]
      const atA: unknown[] = []
      const atB: unknown[] = []
      a.subscribe('t.echo', (d) => atA.push(d))
      b.subscribe('t.echo', (d) => atB.push(d))
      await publishUntilSeen(a, 't.echo', () => atB.length > 0)
      await publishUntilSeen(b, 't.echo', () => atA.length > 0)
      const before = atA.length
      a.publish('t.echo', 'mine')
      b.publish('t.echo', 'after')
      await until(() => atA.includes('after'), 'b’s next message at a')
      t.notOk(atA.slice(before).includes('mine'), 'a did not get its own message')
    })

    t.test('many listeners on one topic share one subscription; the last one gone drops it', async (t) => {
      const f = await make(t)
      const [a, b] = [await f.node('node-a'), await f.node('node-b')]
      const got: string[] = []
      const offs = ['x', 'y', 'z'].map((name) =>
        b.subscribe('t.share', (d) => {
          if (typeof d === 'string') got.push(name)
        })
      )
      const probed: unknown[] = []
      const probe = b.subscribe('t.share', (d) => probed.push(d))
      await publishUntilSeen(a, 't.share', () => probed.length > 0)
      probe()
      a.publish('t.share', 'one')
      await until(() => got.length === 3, 'three listeners called')
      t.same(got.sort(), ['x', 'y', 'z'], 'each local listener gets the one delivery')
      offs[0]!()
      offs[0]!()
      got.length = 0
      a.publish('t.share', 'two')
      await until(() => got.length === 2, 'two listeners left')
      offs[1]!()
      offs[2]!()
      // a new listener on the dropped topic subscribes afresh
      const again: unknown[] = []
      b.subscribe('t.share', (d) => again.push(d))
      await publishUntilSeen(a, 't.share', () => again.length > 0)
      t.same(got.length, 2, 'the removed listeners heard nothing more')
    })

    t.test('a throwing listener costs the others nothing', async (t) => {
      const f = await make(t)
      const [a, b] = [await f.node('node-a'), await f.node('node-b')]
      const got: unknown[] = []
      b.subscribe('t.throw', () => {
        throw new Error('broken subscriber')
      })
      b.subscribe('t.throw', (d) => got.push(d))
      await publishUntilSeen(a, 't.throw', () => got.length > 0)
      t.ok(got.length > 0)
    })

    t.test('bad input: a clear error, nothing sent', async (t) => {
      const f = await make(t)
      const a = await f.node('node-a')
      for (const topic of ['', 'has space', 'x'.repeat(201), 7])
        t.throws(() => a.publish(topic as string, 1), /backplane topic must match/)
      t.throws(() => a.subscribe('bad topic', () => {}), /backplane topic must match/)
      t.throws(() => a.publish('t.ok', 10n), /BigInt/, 'a value JSON cannot carry fails at the publisher')
    })

    t.test('closed: publish is a no-op, close is idempotent', async (t) => {
      const f = await make(t)
      const a = await f.node('node-a')
      await a.close()
      await a.close()
      t.doesNotThrow(() => a.publish('t.closed', 1))
      t.equal(a.available(), false)
    })
  })
}
