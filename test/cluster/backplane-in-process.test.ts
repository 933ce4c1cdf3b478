import t from 'tap'
import { InProcessHub } from '../../runtime/events/index.js'
import { runBackplaneContract, until } from './backplane-contract.js'

runBackplaneContract(t, 'in-process', async (t) => {
  const hub = new InProcessHub()
  const opened: { close(): Promise<void> }[] = []
  t.teardown(() => Promise.all(opened.map((b) => b.close())))
  return {
    node: async (id) => {
      const b = hub.node(id)
      opened.push(b)
      return b
    }
  }
})

t.test('in-process: one subscription per topic per node on the hub', async (t) => {
  const hub = new InProcessHub()
  const [a, b] = [hub.node('node-a'), hub.node('node-b')]
  const offs = [b.subscribe('t.count', () => {}), b.subscribe('t.count', () => {}), a.subscribe('t.count', () => {})]
  t.equal(hub.subscriptions('t.count'), 2, 'two nodes, two subscriptions, whatever the listeners')
  for (const off of offs) off()
  t.equal(hub.subscriptions('t.count'), 0)
  const got: unknown[] = []
  b.subscribe('t.async', (d) => got.push(d))
  a.publish('t.async', 1)
  t.same(got, [], 'delivery is never inside the publisher’s call')
  await until(() => got.length === 1, 'delivered later')
})
