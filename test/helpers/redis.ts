import type { Test } from 'tap'
import { redisServerBin, startRedisServer } from '../../bench/lib/redis-server.js'

/** A real Redis for tests: Debian's redis-server in a throwaway directory on a free loopback port. */
export interface TestRedis {
  url: string
  /** Stops the server (SIGTERM, no save): an outage. */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

/**
 * Starts Redis for the test `t` (stopped and removed when `t` ends); undefined, and `t` skipped,
 * when redis-server is not installed, except under `CI=true` where that is a broken CI.
 */
export async function testRedis(t: Test): Promise<TestRedis | undefined> {
  const bin = redisServerBin()
  if (bin === undefined) {
    const why = 'redis-server is not installed'
    if (process.env.CI === 'true') throw new Error(`${why}: .ci/run installs the redis-server package`)
    t.skip(`${why}: apt-get install redis-server to run the Redis tests`, () => {})
    return undefined
  }
  const server = await startRedisServer(bin)
  t.teardown(() => server.remove())
  return { url: server.url, stop: server.stop, start: server.start }
}
