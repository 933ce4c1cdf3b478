// The core's shared state in PostgreSQL: the control audit log and the decision log (one contract
// on memory, LMDB and PostgreSQL), plugin key-value storage, and, across two nodes of one cluster
// in this process (one Postgres database, one Redis), the logs, plugin values and the interaction
// quota every node sees.
import t, { type Test } from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ControlAuditLog } from '../../runtime/auth/index.js'
import { aiRequest, type ControlAuditEntry, type DecisionEntry } from '../../runtime/contracts/index.js'
import { COMMITMENTS, GovernanceDecisionLog, governanceOf } from '../../runtime/governance/index.js'
import { kvCapability, lmdbPluginKv, memoryPluginKv, type PluginKvStore } from '../../runtime/plugins/capabilities.js'
import { PostgresPluginKv } from '../../runtime/plugins/postgres-kv.js'
import { PostgresDb, PostgresLog, SharedPostgres, Store, type LogPart } from '../../runtime/store/index.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { testRedis } from '../helpers/redis.js'
import { ALICE, BOB, startInteractions } from '../interactions/helpers.js'
import { writePlugin } from '../plugins/helpers.js'
import { runLogContract, type LogUnderTest } from '../store/log-contract.js'

const dir = mkdtempSync(join(tmpdir(), 'shared-state-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const pg = await testPostgres(t)
let stores = 0
// one database for the contracts: each log of each test has a name of its own in it
const contractPool = pg === undefined ? undefined : await PostgresDb.open({ url: await pg.database(t), poolSize: 4 })
const contractDb =
  contractPool === undefined ? undefined : new SharedPostgres(async () => contractPool, 'the contracts database')
if (contractDb !== undefined)
  t.teardown(async () => {
    await contractDb.close()
    await contractPool?.close()
  })
let logs = 0

/** A fresh LMDB environment for `t`. */
function lmdb(t: Test): Store {
  const store = new Store(join(dir, `lmdb-${stores++}`))
  t.teardown(() => store.close())
  return store
}

/** A log's store: its LMDB or its pool, and the entries its ring keeps (small where reads go below it). */
type Backend = (t: Test) => Promise<{ db?: Store; pg?: SharedPostgres; capacity: number }>
const backends: [string, Backend][] = [
  // in memory the ring is the whole log
  ['memory', async () => ({ capacity: 1000 })],
  ['lmdb', async (t) => ({ db: lmdb(t), capacity: 4 })]
]
if (contractDb !== undefined) backends.push(['postgres', async () => ({ pg: contractDb, capacity: 4 })])

for (const [kind, backend] of backends) {
  runLogContract(t, `audit log (${kind})`, async (t): Promise<LogUnderTest> => {
    const { db, pg: shared, capacity } = await backend(t)
    const log = new ControlAuditLog(
      capacity,
      db?.db<ControlAuditEntry, [number, number]>('audit'),
      1000,
      undefined,
      { db: db?.db<ControlAuditEntry, [number, number]>('audit-anonymous'), keptPerSecond: 1000 },
      shared &&
        new PostgresLog<ControlAuditEntry>({ pg: shared, name: `audit-${logs++}`, node: 'node-a', retention: 1000 })
    )
    return {
      record: (n, part) => log.record(part === 'main' ? 'ops' : null, 'test.write', 'target', true, String(n)),
      read: (limit, cursor, part) => log.read(limit, cursor, part),
      numberOf: (e) => Number((e as { message: string }).message),
      pageOrder: 'oldest-first'
    }
  })

  runLogContract(t, `decision log (${kind})`, async (t): Promise<LogUnderTest> => {
    const { db, pg: shared, capacity } = await backend(t)
    const log = new GovernanceDecisionLog(
      capacity,
      db?.db<DecisionEntry, [number, number]>('decisions'),
      1000,
      undefined,
      { db: db?.db<DecisionEntry, [number, number]>('decisions-anonymous') },
      shared &&
        new PostgresLog<DecisionEntry>({
          pg: shared,
          name: `decisions-${logs++}`,
          node: 'node-a',
          retention: 1000,
          sharedField: 'context_snapshot'
        })
    )
    return {
      record: (n, part) => {
        log.record(decision(n, part))
        return log.written()
      },
      read: (limit, cursor, part) => log.read(limit, cursor, part),
      numberOf: (e) => Number((e as DecisionEntry).reason),
      pageOrder: 'newest-first'
    }
  })
}

/** Decision `n`: of an authenticated turn (`main`) or an anonymous one (admitted: never sampled away). */
function decision(n: number, part: LogPart, snapshot?: Record<string, unknown>): DecisionEntry {
  return {
    timestamp: new Date().toISOString(),
    policy_name: `p${n % 26}`,
    policy_source: 'test',
    policy_version: '1',
    decision: 'admit',
    reason: String(n),
    evaluation_ms: 0.01,
    context_snapshot: snapshot ?? (part === 'main' ? { user_id: 'alice', message: 'hi' } : { message: 'hi' })
  }
}

/** Plugin key-value storage, one contract on memory, LMDB and PostgreSQL, through the capability plugins get. */
function runKvContract(kind: string, make: (t: Test) => Promise<PluginKvStore>): void {
  t.test(`plugin key-value storage (${kind})`, async (t) => {
    const store = await make(t)
    const one = kvCapability(store, 'one')
    const two = kvCapability(store, 'two')
    t.equal(await one.get('a'), undefined, 'nothing yet')
    await one.put('a', { n: 1, list: [1, 'x', null] })
    await one.put('a/b', 'text')
    await one.put('a/c', 0)
    await one.put('b', null)
    t.same(await one.get('a'), { n: 1, list: [1, 'x', null] }, 'a value reads back as JSON')
    t.equal(await one.get('b'), null, 'null is a value, not nothing')
    await one.put('a', [2])
    t.same(await one.get('a'), [2], 'a put replaces the value')
    t.same(await one.list('a/'), ['a/b', 'a/c'], 'a prefix lists its keys in order')
    t.same(await one.list(), ['a', 'a/b', 'a/c', 'b'])
    t.equal(await two.get('a'), undefined, "another plugin never reads one's keys")
    t.same(await two.list(), [])
    t.equal(await two.delete('a'), false, 'nor deletes them: it has no such key')
    t.equal(await one.delete('a'), true)
    t.equal(await one.delete('a'), false, 'deleted once')
    t.equal(await one.get('a'), undefined)
    await t.rejects(one.put('x'.repeat(513), 1), /a key must be a string of 1-512 characters/)
    await t.rejects(one.put('nul\u0000key', 1), /U\+0000 or a lone surrogate/)
    await t.rejects(one.put('\ud800', 1), /U\+0000 or a lone surrogate/)
    await t.rejects(one.put('big', 'x'.repeat(1_048_577)), /larger than 1048576 bytes/)
    await t.rejects(one.put('f', undefined), /must be JSON/)
    t.same(await one.list(), ['a/b', 'a/c', 'b'], 'a refused put changed nothing')
    await one.put('obj', { n: 1 })
    ;((await one.get('obj')) as { n: number }).n = 2
    t.same(await one.get('obj'), { n: 1 }, 'changing what was read changes nothing kept')
  })
}
runKvContract('memory', async () => memoryPluginKv())
runKvContract('lmdb', async (t) => {
  const store = lmdb(t)
  return lmdbPluginKv(() => store.db<unknown, [string, string]>('plugin-kv'))
})
if (contractDb !== undefined) runKvContract('postgres', async () => new PostgresPluginKv(contractDb))

if (contractDb !== undefined) {
  t.test('postgres log: one INSERT per batch, every node listed with its entries, retention kept', async (t) => {
    const shared = contractDb
    let inserts = 0
    const query = shared.query.bind(shared)
    shared.query = ((schema, text, params) => {
      if (/^\s*INSERT/.test(text)) inserts++
      return query(schema, text, params)
    }) as typeof shared.query
    t.teardown(() => {
      shared.query = query
    })
    const log = (node: string, retention = 1000) =>
      new PostgresLog<DecisionEntry>({
        pg: shared,
        name: 'two-nodes',
        node,
        retention,
        sharedField: 'context_snapshot'
      })
    const a = log('node-a')
    const b = log('node-b')
    // a governed turn's 26 evaluations share one snapshot: one INSERT for them all
    const snapshot = { user_id: 'alice', message: 'hi', nested: { deep: [1, 2] } }
    const turn = Array.from({ length: 26 }, (_, i) => a.append(decision(i + 1, 'main', snapshot)))
    await Promise.all(turn)
    t.equal(inserts, 1, "a turn's evaluations are written in one statement")
    await b.append(decision(27, 'main'))
    const page = (await b.page(30))!
    t.same(
      page.entries.map((e) => [e.node, Number(e.reason)]),
      [['node-b', 27], ...Array.from({ length: 26 }, (_, i) => ['node-a', 26 - i])],
      'every node reads every node’s entries, newest first, each with its node'
    )
    t.same(page.entries[1]!.context_snapshot, snapshot, 'the shared field reads back whole')
    t.same(Object.keys(page.entries[1]!), [
      'timestamp',
      'policy_name',
      'policy_source',
      'policy_version',
      'decision',
      'reason',
      'evaluation_ms',
      'context_snapshot',
      'node'
    ])

    // retention: the oldest beyond it go at the next trim (every 1 000 appends of a node)
    const small = new PostgresLog<DecisionEntry>({ pg: shared, name: 'small', node: 'node-a', retention: 10 })
    const all = Array.from({ length: 1000 }, (_, i) => small.append(decision(i + 1, 'main')))
    await Promise.all(all)
    await small.append(decision(1001, 'main'))
    const kept = (await small.page(2000))!.entries.map((e) => Number(e.reason))
    t.ok(kept.length <= 11 && kept[0] === 1001 && kept.includes(992), `the newest kept: ${kept.join(' ')}`)
  })
}

// --- two nodes of one cluster ---
// in a test of its own: its setup (a Redis, a model, two nodes starting) is awaited inside it, so
// the root cannot run out of queued tests and end (tearing the database down) while a node starts
t.test('two nodes of one cluster', async (t) => {
  const redis = pg === undefined ? undefined : await testRedis(t)
  const model = redis === undefined ? undefined : await new OpenAiServer().start()
  if (model !== undefined) t.teardown(() => model.close())
  if (pg !== undefined && redis !== undefined && model !== undefined) {
    const url = await pg.database(t)
    const ADMIN = 'admin-token-0123456789'
    const policies = join(dir, 'policies.yaml')
    writeFileSync(policies, 'version: "1.0"\npolicies:\n  - {name: kill-switch, type: kill-switch}\n')
    // one signing key deployed to both nodes, so each verifies what the other signed
    const keyFile = join(dir, 'commitment-key.pem')
    writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600
    })
    const plugins = join(dir, 'plugins')
    writePlugin(plugins, 'kvp', {
      manifest: { name: 'kvp', version: '1.0.0', sandbox: 'inline', permissions: { kv: true } },
      index: `import { definePlugin, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ tools: [
  tool({ name: 'kv-put', run: async (args, ctx) => { await ctx.kv.put(args.key, args.value); return 'ok' } }),
  tool({ name: 'kv-get', run: async (args, ctx) => ({ value: await ctx.kv.get(args.key) ?? 'none' }) })
] })
`
    })
    const node = (id: string) =>
      startInteractions({
        'platform.cluster.enabled': true,
        'platform.cluster.node-id': id,
        'platform.cluster.redis-url': redis.url,
        'platform.postgres.url': url,
        'platform.admin.http-write-enabled': true,
        'platform.auth.tokens': [
          { token: ALICE, principal: 'alice' },
          { token: BOB, principal: 'bob' },
          { token: ADMIN, principal: 'ops', roles: ['admin'] }
        ],
        'platform.ai.governance.policy-files': [policies],
        'platform.plugins.dirs': [plugins],
        'platform.plugins.kvp': { sandbox: 'inline', permissions: { kv: true } },
        'platform.interactions.quota.runs-in-flight': 1,
        'platform.ai.governance.commitment-records.enabled': true,
        'platform.ai.governance.commitment-records.key-file': keyFile,
        'platform.ai.runtime': 'openai',
        'platform.ai.openai.base-url': model.url,
        'platform.ai.openai.model': 'test-model'
      })
    const a = await node('node-a')
    t.teardown(a.close)
    const b = await node('node-b')
    t.teardown(b.close)
    const admin = { token: ADMIN }

    t.test('a decision made on node A is listed on node B, with its node', async (t) => {
      const gate = governanceOf(a.platform)!.gate
      const request = aiRequest({ message: 'decided on a', userId: 'carol' })
      t.ok((await gate.admit('test', request)).admitted)
      await gate.afterResponse('test', request, 'done')
      await governanceOf(a.platform)!.decisionLog.written()
      const listed = await b.api.call('GET', '/api/admin/governance/decisions?limit=50', admin)
      t.equal(listed.status, 200)
      const mine = (listed.body as DecisionEntry[]).filter((e) => e.context_snapshot.message === 'decided on a')
      t.ok(mine.length > 0, 'B lists the evaluations of the turn A governed')
      t.ok(
        mine.every((e) => e.node === 'node-a' && e.policy_name === 'kill-switch'),
        'each with the node that decided'
      )
    })

    t.test('an audit entry of a kill switch armed on node A is listed on node B', async (t) => {
      const armed = await a.api.call('POST', '/api/admin/governance/kill-switch/arm', {
        ...admin,
        body: { reason: 'drill on a' }
      })
      t.equal(armed.status, 200)
      // the audit entry is committed before the answer: B lists it at once
      const listed = await b.api.call('GET', '/api/admin/audit?limit=20', admin)
      t.equal(listed.status, 200)
      t.match(
        (listed.body as { action: string }[]).find((e) => e.action === 'governance.kill_switch.arm'),
        { principal: 'ops', target: 'kill-switch', success: true, message: 'drill on a', node: 'node-a' }
      )
      // disarmed where it was armed: A runs turns again at once, whenever B hears of it
      t.equal((await a.api.call('POST', '/api/admin/governance/kill-switch/disarm', admin)).status, 200)
      // an attempt without a principal on B, kept apart, is listed on A with B's node
      const refused = await b.api.call('POST', '/api/admin/governance/kill-switch/arm', { body: { reason: 'x' } })
      t.equal(refused.status, 401)
      // a refusal is recorded without holding its answer back: A lists it once B's batch is in
      let anonymous: unknown[] = []
      for (let i = 0; i < 200 && anonymous.length === 0; i++) {
        anonymous = (await a.api.call('GET', '/api/admin/audit?callers=anonymous', admin)).body as unknown[]
        if (anonymous.length === 0) await new Promise((r) => setTimeout(r, 10))
      }
      t.match(anonymous, [
        { action: 'governance.kill_switch.arm.denied.anonymous', principal: 'anonymous', node: 'node-b' }
      ])
      const all = (await a.api.call('GET', '/api/admin/audit?callers=authenticated', admin)).body as {
        action: string
      }[]
      t.same(
        all.slice(-2).map((e) => e.action),
        ['governance.kill_switch.arm', 'governance.kill_switch.disarm'],
        'oldest first within the page, as on one node'
      )
    })

    t.test('a commitment recorded on node A is listed and verified on node B', async (t) => {
      const record = await a.platform.area(COMMITMENTS).record({
        coordinationId: 'coord-1',
        issuer: 'coordinator',
        principal: 'alice',
        subject: 'worker',
        scope: 'summarise',
        outcome: 'started'
      })
      const listed = await b.api.call('GET', '/api/admin/governance/commitments', admin)
      t.equal(listed.status, 200)
      t.match(listed.body, [{ id: record.id, coordinationId: 'coord-1', signed: true, verified: true, node: 'node-a' }])
    })

    t.test('a plugin value put on node A is read on node B', async (t) => {
      const tool = (tp: typeof a, name: string) => tp.platform.plugins.tools().find((x) => x.name === name)!
      t.equal(await tool(a, 'kv-put').call({ key: 'greeting', value: { from: 'a' } }), 'ok')
      t.same(await tool(b, 'kv-get').call({ key: 'greeting' }), { value: { from: 'a' } })
      t.same(await tool(a, 'kv-get').call({ key: 'nothing' }), { value: 'none' })
    })

    t.test('a quota of one run in flight holds across the nodes', async (t) => {
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      t.teardown(release)
      model.chat = () => ({
        stream: sseEvents([deltaChunk({ content: 'held ' }), deltaChunk({}, 'stop')]),
        pauseAt: { index: 1, until: held }
      })
      const first = await a.api.create({ message: 'on a', background: true })
      t.equal(first.status, 200, "alice's run starts on A")
      const refused = await b.api.create({ message: 'on b', background: true })
      t.equal(refused.status, 429, 'her second, on B, is refused')
      t.match(refused.body, { code: 'PLT_ERR_INTERACTIONS_QUOTA', error: /at most 1 runs in flight/ })
      t.equal(refused.headers.get('retry-after'), '1')
      t.equal((await b.api.create({ message: 'bob on b', background: true }, BOB)).status, 200, 'bob is not locked out')
      release()
      await a.api.settled(first.body.id)
      // the slot goes back to Redis as the run ends; the next request may reach it a moment before
      let status = 0
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await b.api.create({ message: 'after the first', background: true })).status
        if (status !== 200) await new Promise((r) => setTimeout(r, 20))
      }
      t.equal(status, 200, 'once it ended, her next run starts on B')
    })
  }
})
