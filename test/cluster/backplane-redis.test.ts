import t from 'tap'
import { RedisBackplane } from '../../runtime/cluster/redis-backplane.js'
import { createLogger } from '../../runtime/observability/index.js'
import { testRedis } from '../helpers/redis.js'
import { publishUntilSeen, runBackplaneContract, until } from './backplane-contract.js'

// one Redis for the whole file; each fixture's nodes use their own channel prefix, so cases never hear each other
const redis = await testRedis(t)
const logger = createLogger('silent')
let fixtures = 0

if (redis !== undefined) {
  runBackplaneContract(t, 'redis', async (t) => {
    const prefix = `test${fixtures++}:`
    const opened: RedisBackplane[] = []
    t.teardown(() => Promise.all(opened.map((b) => b.close())))
    return {
      node: async (id) => {
        const b = new RedisBackplane({ url: redis.url, node: id, logger, prefix })
        b.start()
        opened.push(b)
        await until(() => b.available(), `${id} connected`)
        return b
      }
    }
  })

  t.test('redis: down, publish does not throw and the node is unavailable; back, delivery resumes', async (t) => {
    const opts = { url: redis.url, logger, prefix: 'outage:', maxRetryMs: 100 }
    const a = new RedisBackplane({ ...opts, node: 'node-a' })
    const b = new RedisBackplane({ ...opts, node: 'node-b' })
    t.teardown(() => Promise.all([a.close(), b.close()]))
    a.start()
    b.start()
    await until(() => a.available() && b.available(), 'both connected')
    const got: unknown[] = []
    b.subscribe('t.outage', (d) => got.push(d))
    await publishUntilSeen(a, 't.outage', () => got.length > 0)

    await redis.stop()
    await until(() => !a.available() && !b.available(), 'both see Redis gone')
    const dropped = a.dropped
    t.doesNotThrow(() => a.publish('t.outage', 'lost'), 'publish while Redis is down does not throw')
    // counted at once, or when the publish fails (a node that saw its subscriber go may not yet
    // have seen its publisher go)
    await until(() => a.dropped > dropped, 'the message dropped and counted')
    t.ok(a.dropped > dropped, 'the message is dropped and counted')

    await redis.start()
    await until(() => a.available() && b.available(), 'both reconnected')
    got.length = 0
    // the subscription made before the outage is restored by the client itself
    await publishUntilSeen(a, 't.outage', () => got.length > 0)
    t.notOk(got.includes('lost'), 'pub/sub keeps nothing: what was published while down is gone')
  })

  t.test('redis: a Redis down at start-up does not fail the start; the node joins when it comes up', async (t) => {
    await redis.stop()
    const a = new RedisBackplane({ url: redis.url, logger, prefix: 'late:', node: 'node-a', maxRetryMs: 100 })
    const b = new RedisBackplane({ url: redis.url, logger, prefix: 'late:', node: 'node-b', maxRetryMs: 100 })
    t.teardown(() => Promise.all([a.close(), b.close()]))
    a.start()
    b.start()
    const got: unknown[] = []
    b.subscribe('t.late', (d) => got.push(d))
    t.equal(b.available(), false)
    await redis.start()
    await until(() => a.available() && b.available(), 'both connected')
    await publishUntilSeen(a, 't.late', () => got.length > 0)
    t.ok(got.length > 0, 'the subscription made while Redis was down took effect')
  })
}
