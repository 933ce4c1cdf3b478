import t from 'tap'
import { PrincipalQuota } from '../../runtime/interactions/quota.js'

t.test('a byte budget refills continuously and refuses with the seconds to wait', async (t) => {
  const q = new PrincipalQuota(
    () => ({ runsInFlight: 0, bytesPerMinute: 60_000 }),
    () => 0
  )
  t.equal(q.take('alice', 60_000, 0), undefined, 'a minute at once')
  t.same(q.take('alice', 30_000, 0), { over: '60000 request bytes per minute', waitSeconds: 30 })
  t.equal(q.take('alice', 30_000, 30_000), undefined, 'half a minute later half the budget is back')
  t.equal(q.take('bob', 60_000, 30_000), undefined, 'another principal has its own')
})

t.test('runs in flight are counted by the caller and refused at the limit', async (t) => {
  const inFlight = new Map([['alice', 2]])
  const q = new PrincipalQuota(
    () => ({ runsInFlight: 2, bytesPerMinute: 0 }),
    (o) => inFlight.get(o) ?? 0
  )
  t.same(q.take('alice', 10), { over: '2 runs in flight', waitSeconds: 1 })
  t.equal(q.take('bob', 10), undefined)
})

t.test(
  'principals with a full budget and nothing in flight are forgotten past 10 000, one sweep a second',
  async (t) => {
    const q = new PrincipalQuota(
      () => ({ runsInFlight: 0, bytesPerMinute: 60_000 }),
      (o) => (o === 'p0' ? 1 : 0)
    )
    for (let i = 0; i <= 10_000; i++) q.take(`p${i}`, 1, 0)
    t.equal(q.size, 10_001, 'nobody is forgotten while budgets are spent')
    q.take('late', 1, 500)
    t.equal(q.size, 10_002, 'no second sweep within the second')
    q.take('later', 1, 120_000)
    t.equal(q.size, 2, 'two minutes on, the refilled are forgotten; the one in flight and the newest stay')
  }
)
