// governance across the nodes of a cluster, and the shared-counter contract its limits count on
import t, { type Test } from 'tap'
import { createClient } from 'redis'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installAreas } from '../../runtime/areas.js'
import { clusterArea } from '../../runtime/cluster/install.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { governanceArea } from '../../runtime/governance/install.js'
import { scopeArea } from '../../runtime/scope/install.js'
import type { Admission } from '../../runtime/governance/gate.js'
import { RedisCounters } from '../../runtime/cluster/redis-counters.js'
import { createLogger } from '../../runtime/observability/index.js'
import { InProcessCounters } from '../../runtime/store/index.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { testRedis } from '../helpers/redis.js'
import { testPostgres } from '../helpers/postgres.js'
import { until } from './backplane-contract.js'
import { runCountersContract } from './counters-contract.js'

// two nodes of one cluster in this process, sharing one throwaway Redis (each its own data directory)
const redis = await testRedis(t)
// cluster mode keeps the decision and audit logs in PostgreSQL: one database for the file
const pg = redis === undefined ? undefined : await testPostgres(t)
const pgUrl = pg === undefined ? undefined : await pg.database(t)
const ADMIN = 'admin-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'gov-cluster-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const policies = join(dir, 'policies.yaml')
writeFileSync(
  policies,
  `version: "1.0"
policies:
  - {name: kill-switch, type: kill-switch}
  - {name: content, type: deny-list, swappable: true, config: {phrases: [forbidden]}}
  - {name: per-minute, type: rate-limit, config: {limit: 4, window-seconds: 60}}
  - {name: one-at-a-time, type: concurrency-limit, config: {max-concurrent: 1}}
`
)
const words = join(dir, 'words.yaml')
const wordsFile = (phrase: string) =>
  `version: "1.0"\npolicies:\n  - {name: words, type: deny-list, config: {phrases: [${phrase}]}}\n`
writeFileSync(words, wordsFile('first-word'))

/** Polls for at most `ms` (no fixed sleep): true once `check` held. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const end = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 10))
  }
}

if (redis !== undefined && pgUrl !== undefined) {
  const dataDirs = { 'node-a': join(dir, 'a'), 'node-b': join(dir, 'b') }
  for (const d of Object.values(dataDirs)) mkdirSync(d)
  const start = (node: 'node-a' | 'node-b', watchMs = 0): Promise<TestPlatform> =>
    startTestPlatform(
      {
        'platform.cluster.enabled': true,
        'platform.cluster.redis-url': redis.url,
        'platform.postgres.url': pgUrl,
        'platform.cluster.node-id': node,
        'platform.data-dir': dataDirs[node],
        'platform.ai.governance.policy-files': [policies, words],
        'platform.ai.governance.watch-interval-ms': watchMs,
        'platform.admin.http-write-enabled': true,
        'platform.auth.tokens': [{ token: ADMIN, principal: 'ops', roles: ['admin'] }]
      },
      { install: (p) => installAreas(p, [clusterArea, scopeArea, governanceArea]) }
    )
  const nodes = { a: await start('node-a', 100), b: await start('node-b') }
  t.teardown(() => Promise.all([nodes.a.close(), nodes.b.close()]))
  const gate = (tp: TestPlatform) => governanceOf(tp.platform)!.gate
  /** One whole turn: admitted, it ends at once, so the concurrency slot it took is given back. */
  const admit = async (tp: TestPlatform, userId: string, message = 'hello'): Promise<Admission> => {
    const request = aiRequest({ message, userId })
    const a = await gate(tp).admit('test', request)
    if (a.admitted) await gate(tp).afterResponse('test', request, 'done')
    return a
  }
  const deniedFor = (a: Admission) => (a.admitted ? undefined : a.reason)
  const post = async (tp: TestPlatform, path: string, body: unknown = {}) => {
    const r = await fetch(`${tp.url}/api/admin/governance${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify(body)
    })
    return { status: r.status, body: (await r.json()) as Record<string, unknown> }
  }
  const bothUp = () => until(() => [nodes.a, nodes.b].every((n) => n.platform.backplane().available()), 'both joined')
  await bothUp()

  t.test('kill switch: armed on A denies on B within a second; disarmed on B admits on A', async (t) => {
    t.equal(deniedFor(await admit(nodes.b, 'ks-user')), undefined)
    const armed = await post(nodes.a, '/kill-switch/arm', { reason: 'incident 42' })
    t.equal(armed.status, 200)
    t.ok(await within(1000, async () => deniedFor(await admit(nodes.b, 'ks-user')) === 'incident 42'), 'B denies')
    const health = governanceOf(nodes.b.platform)!.health().killSwitch
    t.match(health, { armed: true, reason: 'incident 42', principal: 'ops', armedAt: armed.body.armedAt })
    t.equal((await post(nodes.b, '/kill-switch/disarm')).status, 200)
    t.ok(await within(1000, async () => (await admit(nodes.a, 'ks-user')).admitted), 'A admits again')
  })

  t.test('kill switch: a node restarted meanwhile learns the newest state; both restarted stay armed', async (t) => {
    await post(nodes.a, '/kill-switch/arm', { reason: 'before the restart' })
    await until(() => governanceOf(nodes.b.platform)!.killSwitch()!.armed, 'B armed')
    await nodes.b.close()
    // disarmed while B is away: B's own store still says armed, the cluster says otherwise
    await post(nodes.a, '/kill-switch/disarm')
    nodes.b = await start('node-b')
    t.ok(await within(5000, async () => (await admit(nodes.b, 'ks-user')).admitted), 'B learned the disarm')

    await post(nodes.b, '/kill-switch/arm', { reason: 'stays armed' })
    await until(() => governanceOf(nodes.a.platform)!.killSwitch()!.armed, 'A armed')
    await Promise.all([nodes.a.close(), nodes.b.close()])
    nodes.a = await start('node-a', 100)
    nodes.b = await start('node-b')
    t.equal(deniedFor(await admit(nodes.a, 'ks-user')), 'stays armed', 'A still armed after the restart')
    t.equal(deniedFor(await admit(nodes.b, 'ks-user')), 'stays armed', 'B still armed after the restart')
    await bothUp()
    await post(nodes.a, '/kill-switch/disarm')
    await until(() => !governanceOf(nodes.b.platform)!.killSwitch()!.armed, 'B disarmed')
  })

  t.test('rate-limit: 4 per minute holds across A and B together', async (t) => {
    const answers: (string | undefined)[] = []
    for (let i = 0; i < 6; i++) answers.push(deniedFor(await admit(i % 2 === 0 ? nodes.a : nodes.b, 'rl-user')))
    t.same(answers.slice(0, 4), [undefined, undefined, undefined, undefined], 'four admitted, two on each node')
    t.same(answers.slice(4), [
      'rate-limited: user:rl-user exceeded 4 requests per 60s',
      'rate-limited: user:rl-user exceeded 4 requests per 60s'
    ])
    t.equal(deniedFor(await admit(nodes.b, 'rl-other')), undefined, 'another user counts alone')
  })

  t.test('concurrency-limit: one turn in flight per user across A and B', async (t) => {
    const req = aiRequest({ message: 'hello', userId: 'cc-user' })
    t.ok((await gate(nodes.a).admit('test', req)).admitted, 'A takes the slot')
    t.equal(
      deniedFor(await gate(nodes.b).admit('test', aiRequest({ message: 'hello', userId: 'cc-user' }))),
      'concurrency limit: user:cc-user already has 1 in-flight (max 1)',
      'B is refused while A holds it'
    )
    await gate(nodes.a).afterResponse('test', req, 'done')
    t.ok(await within(5000, async () => (await admit(nodes.b, 'cc-user')).admitted), 'freed on A, taken on B')
  })

  t.test('a reload on A is made on B; a policy-file change seen on A is read on B', async (t) => {
    const r = await post(nodes.a, '/reload', {
      swapName: 'content',
      content: 'version: "1.0"\npolicies:\n  - {name: content-v2, type: deny-list, config: {phrases: [verboten]}}\n'
    })
    t.equal(r.status, 200)
    t.ok(
      await within(1000, async () => deniedFor(await admit(nodes.b, 'reload-user', 'verboten')) !== undefined),
      'B denies what the reloaded policy denies'
    )
    // B does not watch its files: it reads its copy when A announces the change
    t.equal(deniedFor(await admit(nodes.b, 'file-user', 'second-word')), undefined)
    writeFileSync(words, wordsFile('second-word'))
    t.ok(
      await within(5000, async () => deniedFor(await admit(nodes.b, 'file-user', 'second-word')) !== undefined),
      'B reloaded its copy of the file'
    )
  })

  t.test(
    'Redis stopped: limits refuse (fail closed); a kill switch armed meanwhile reaches B when it is back',
    async (t) => {
      await redis.stop()
      await until(() => !nodes.a.platform.sharedCounters().available(), 'A sees Redis gone')
      t.equal(
        deniedFor(await admit(nodes.a, 'down-user')),
        'rate-limited: the shared counters cannot be reached, so user:down-user is refused until they can (fail closed)'
      )
      const ready = await fetch(`${nodes.a.url}/readyz`)
      t.equal(ready.status, 200, 'the node keeps serving')
      t.match(await ready.json(), { status: 'DEGRADED', checks: { counters: 'DEGRADED' } })
      const armed = await post(nodes.a, '/kill-switch/arm', { reason: 'armed during the outage' })
      t.equal(armed.status, 200, 'arming does not need Redis: it is stored on A and holds there')
      t.equal(deniedFor(await admit(nodes.a, 'down-user')), 'armed during the outage')
      await redis.start()
      t.ok(
        await within(15_000, async () => deniedFor(await admit(nodes.b, 'down-user')) === 'armed during the outage'),
        'B learns the arm once Redis is back'
      )
      await post(nodes.b, '/kill-switch/disarm')
      t.ok(await within(5000, async () => (await admit(nodes.a, 'up-user')).admitted), 'limits count again')
    }
  )
}

runCountersContract(t, 'in-process', async () => {
  // one process is one medium: every node of it counts on the same instance
  const counters = new InProcessCounters()
  return { node: async () => counters }
})

// the counters alone, after the two nodes' cases: each fixture's nodes use their own key prefix
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
