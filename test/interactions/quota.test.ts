import t from 'tap'
import { PrincipalQuota } from '../../runtime/interactions/quota.js'
import { INTERACTION_ERRORS } from '../../runtime/interactions/errors.js'
import { InProcessCounters } from '../../runtime/store/index.js'
import { isPlatformError, type SharedCounters } from '../../runtime/contracts/index.js'

/** The error `p` rejects with, for checking its code. */
async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e
  )
}

t.test('a byte budget refills continuously and refuses with the seconds to wait', async (t) => {
  let now = 0
  const counters = new InProcessCounters(() => now)
  const q = new PrincipalQuota(
    () => ({ runsInFlight: 0, bytesPerMinute: 60_000 }),
    () => counters
  )
  t.equal(await q.take('alice', 60_000), undefined, 'a minute at once')
  t.same(await q.take('alice', 30_000), { over: '60000 request bytes per minute', waitSeconds: 30 })
  now = 30_000
  t.equal(await q.take('alice', 30_000), undefined, 'half a minute later half the budget is back')
  t.equal(await q.take('bob', 60_000), undefined, 'another principal has its own')
  t.equal(await q.take('carol', 10_000_000), undefined, 'a request larger than the budget costs the whole budget')
  t.same(await q.take('carol', 1), { over: '60000 request bytes per minute', waitSeconds: 1 })
})

t.test('runs in flight: each run holds a slot, the next is refused, a release gives back one', async (t) => {
  const counters = new InProcessCounters()
  const q = new PrincipalQuota(
    () => ({ runsInFlight: 2, bytesPerMinute: 60_000 }),
    () => counters
  )
  const first = await q.holdRun('alice')
  await q.holdRun('alice')
  t.same(await q.take('alice', 10), { over: '2 runs in flight', waitSeconds: 1 }, 'refused before it spends bytes')
  const refused = await failure(q.holdRun('alice'))
  t.ok(isPlatformError(refused, INTERACTION_ERRORS.INTERACTIONS_QUOTA), 'a third run is the quota error')
  t.equal(await q.take('bob', 10), undefined, 'another principal is not locked out')
  first()
  first()
  t.equal(await q.take('alice', 10), undefined, 'a release frees a place')
  await q.holdRun('alice')
  t.ok(
    isPlatformError(await failure(q.holdRun('alice')), INTERACTION_ERRORS.INTERACTIONS_QUOTA),
    'a second call of the same release gave back nothing more'
  )
})

t.test('counters out of reach refuse every run and request (fail closed)', async (t) => {
  const down = (): Promise<never> => Promise.reject(new Error('Redis cannot be reached'))
  const counters: SharedCounters = {
    kind: 'redis',
    window: () => ({ hit: down }),
    slots: () => ({ acquire: down, release: () => {}, heldHere: () => 0 }),
    budget: () => ({ take: down }),
    available: () => false,
    close: async () => {}
  }
  const q = new PrincipalQuota(
    () => ({ runsInFlight: 1, bytesPerMinute: 60_000 }),
    () => counters
  )
  const uncounted = (e: unknown) => isPlatformError(e, INTERACTION_ERRORS.INTERACTIONS_QUOTA_UNCOUNTED)
  t.ok(uncounted(await failure(q.take('alice', 10))), 'a request is refused')
  t.ok(uncounted(await failure(q.holdRun('alice'))), 'a run is refused')
  const open = new PrincipalQuota(
    () => ({ runsInFlight: 0, bytesPerMinute: 0 }),
    () => counters
  )
  t.equal(await open.take('alice', 10), undefined, 'without a quota nothing is counted, so nothing is refused')
  t.doesNotThrow(await open.holdRun('alice'), 'and its release gives back nothing')
})
