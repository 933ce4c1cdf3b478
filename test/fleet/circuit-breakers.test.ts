// The breaker's states on a clock the test moves: threshold, open time, one probe at a time,
// recent failures counted for every ref.
import t from 'tap'
import { CircuitBreakers, RECENT_FAILURE_WINDOW_MS, type CircuitChange } from '../../runtime/fleet/circuit-breakers.js'

t.test('closed, open after the threshold, half-open after the open time, one probe', async (t) => {
  let now = 1_000
  const b = new CircuitBreakers(3, 500, () => now)
  const changes: string[] = []
  const change = (c: CircuitChange): void => {
    changes.push(`${c.fromState}>${c.toState}`)
  }
  for (let i = 0; i < 2; i++) b.record('c', 'a', false, true, change)
  t.equal(b.state('c', 'a'), 'CLOSED')
  b.record('c', 'a', true, true, change)
  for (let i = 0; i < 2; i++) b.record('c', 'a', false, true, change)
  t.equal(b.state('c', 'a'), 'CLOSED', 'a success resets the consecutive count')
  b.record('c', 'a', false, true, change)
  t.equal(b.state('c', 'a'), 'OPEN')
  t.notOk(b.allow('c', 'a', change))
  t.equal(b.state('c', 'b'), 'CLOSED', 'per agent')
  t.equal(b.state('d', 'a'), 'CLOSED', 'per coordinator')
  now += 500
  t.equal(b.state('c', 'a'), 'HALF_OPEN')
  t.ok(b.allow('c', 'a', change), 'the probe goes out')
  t.notOk(b.allow('c', 'a', change), 'while it is out, the others fail fast')
  b.record('c', 'a', false, true, change)
  t.equal(b.state('c', 'a'), 'OPEN', 'a failed probe opens it again')
  now += 500
  t.ok(b.allow('c', 'a', change))
  b.abandon('c', 'a')
  t.ok(b.allow('c', 'a', change), 'a cancelled probe lets another probe go')
  b.record('c', 'a', true, true, change)
  t.equal(b.state('c', 'a'), 'CLOSED')
  t.same(changes, ['CLOSED>OPEN', 'OPEN>HALF_OPEN', 'HALF_OPEN>OPEN', 'OPEN>HALF_OPEN', 'HALF_OPEN>CLOSED'])
  t.equal(b.recentFailures('c', 'a'), 6)
  now = 1_500 + RECENT_FAILURE_WINDOW_MS
  t.equal(b.recentFailures('c', 'a'), 1, 'failures older than the window drop out')
})

t.test('without a breaker, failures are counted and nothing opens', async (t) => {
  const b = new CircuitBreakers(1, 500)
  for (let i = 0; i < 5; i++) b.record('c', 'a', false, false, () => t.fail('no change'))
  t.equal(b.state('c', 'a'), 'CLOSED')
  t.equal(b.recentFailures('c', 'a'), 5)
  // a success neither clears the recent failures nor starts a count for a pair never seen
  b.record('c', 'a', true, false, () => t.fail('no change'))
  t.equal(b.recentFailures('c', 'a'), 5)
  b.record('c', 'fresh', true, false, () => t.fail('no change'))
  t.same([b.state('c', 'fresh'), b.recentFailures('c', 'fresh')], ['CLOSED', 0])
  b.record('c', 'fresh', false, false, () => t.fail('no change'))
  t.equal(b.recentFailures('c', 'fresh'), 1)
})
