// Nodes of one cluster in one process, sharing one throwaway Redis (and Postgres): room members on different nodes
// hear each other in per-sender order with presence, the admin event stream carries every node's
// events and resumes on another node, and GET /api/admin/cluster lists the nodes, flags the one
// whose plugin set differs and shows a silent or stopped node down.
import t, { type Test } from 'tap'
import { definePlugin } from 'uws-agent-platform/sdk'
import { installAreas } from '../../runtime/areas.js'
import { clusterArea } from '../../runtime/cluster/install.js'
import { RedisBackplane } from '../../runtime/cluster/redis-backplane.js'
import { transportArea } from '../../runtime/transport/install.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import { mcpArea } from '../../runtime/mcp/install.js'
import { aiArea } from '../../runtime/ai/install.js'
import { adminArea } from '../../runtime/admin/install.js'
import { interactionsArea } from '../../runtime/interactions/install.js'
import { webhooksArea } from '../../runtime/webhooks/install.js'
import { transportOf } from '../../runtime/transport/index.js'
import { relayTopic } from '../../runtime/transport/cluster-relay.js'
import { createLogger } from '../../runtime/observability/index.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import type { Platform } from '../../runtime/platform.js'
import { NODE_COUNTS } from '../../runtime/contracts/index.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { testRedis } from '../helpers/redis.js'
import { testPostgres } from '../helpers/postgres.js'
import { until } from './backplane-contract.js'
import { wsMember, type Frame, type WsMember } from '../transport/clients.js'
import { sseEvents, wsEvents, type EventSubscriber } from '../admin/event-clients.js'
import { ALICE, TOKENS, call } from '../admin/helpers.js'
import { fingerprintOf } from '../../runtime/admin/cluster-nodes.js'

const redis = await testRedis(t)
// in cluster mode the stores of shared state (conversation memory, eval runs, the audit log,
// plugin values) are in PostgreSQL
const pg = redis === undefined ? undefined : await testPostgres(t)
const postgresUrl = pg === undefined ? undefined : await pg.database(t)
const auth = { authorization: `Bearer ${ALICE}` }
const AREAS = [clusterArea, transportArea, scopeArea, governanceArea, mcpArea, aiArea, adminArea]
const HEARTBEAT_MS = 200

/** A node of the cluster: the areas these features need, a short heartbeat, members that may speak fast. */
async function node(t: Test, id: string, overrides: Record<string, unknown> = {}): Promise<TestPlatform> {
  const tp = await startTestPlatform(
    {
      'platform.cluster.enabled': true,
      'platform.cluster.redis-url': redis!.url,
      'platform.cluster.node-id': id,
      'platform.postgres.url': postgresUrl,
      'platform.admin.cluster.heartbeat-ms': HEARTBEAT_MS,
      'platform.auth.tokens': TOKENS,
      'platform.transport.rooms.max-messages-per-second': 100_000,
      'platform.transport.rooms.message-burst': 100_000,
      ...overrides
    },
    { install: (p) => installAreas(p, AREAS) }
  )
  t.teardown(tp.close)
  await until(() => tp.platform.backplane().available(), `${id} reached Redis`)
  return tp
}

const speak = (m: WsMember, data: unknown): void => {
  m.ws.send(JSON.stringify(data))
}

/** Speaks from `from` until `to` hears it: a backplane subscription takes effect some time after it is made. */
async function linked(from: WsMember, to: WsMember): Promise<void> {
  const heard = () => to.inbox.all.some((f) => f.type === 'message' && f.from === from.uuid && f.data?.probe === true)
  for (let i = 0; i < 300 && !heard(); i++) {
    speak(from, { probe: true })
    await new Promise((r) => setTimeout(r, 20))
  }
  if (!heard()) throw new Error('the two nodes never linked')
}

const messagesFrom = (m: WsMember, sender: string): Frame[] =>
  m.inbox.all.filter((f) => f.type === 'message' && f.from === sender && typeof f.data?.i === 'number')

interface Cluster {
  a: TestPlatform
  b: TestPlatform
}

if (redis !== undefined && pg !== undefined) {
  const nodes: Cluster = { a: await node(t, 'node-a'), b: await node(t, 'node-b') }

  t.test('room members on two nodes hear each other in per-sender order, with presence', async (t) => {
    const { a, b } = nodes
    const onA = await wsMember(a.url, 'lobby')
    const onB = await wsMember(b.url, 'lobby')
    t.teardown(() => {
      onA.ws.close()
      onB.ws.close()
    })
    await linked(onA, onB)
    await linked(onB, onA)

    for (let i = 0; i < 40; i++) {
      speak(onA, { i, text: `a${i}` })
      speak(onB, { i, text: `b${i}` })
    }
    await until(
      () => [onA, onB].every((m) => messagesFrom(m, onA.uuid).length === 40 && messagesFrom(m, onB.uuid).length === 40),
      'every member heard 40 messages from each sender'
    )
    const order = Array.from({ length: 40 }, (_, i) => i)
    for (const [m, at] of [
      [onA, 'a'],
      [onB, 'b']
    ] as const) {
      t.same(
        messagesFrom(m, onA.uuid).map((f) => f.data.i),
        order,
        `the member on node ${at} heard node a's member in order`
      )
      t.same(
        messagesFrom(m, onB.uuid).map((f) => f.data.i),
        order,
        `the member on node ${at} heard node b's member in order`
      )
    }
    t.match(messagesFrom(onB, onA.uuid)[3], { type: 'message', room: 'lobby', from: onA.uuid, data: { text: 'a3' } })

    // presence: a member joining and leaving on b is announced on a
    const late = await wsMember(b.url, 'lobby')
    t.match(await onA.inbox.type('member-joined', (f) => f.uuid === late.uuid), {
      room: 'lobby',
      transport: 'WEBSOCKET'
    })
    late.ws.close()
    t.match(await onA.inbox.type('member-left', (f) => f.uuid === late.uuid), { room: 'lobby' })

    // the room and the sender are the server's: fields a client sets stay inside its data
    speak(onA, { room: 'elsewhere', from: 'forged', i: -1 })
    const forged = await onB.inbox.type('message', (f) => f.data?.i === -1)
    t.match(forged, { room: 'lobby', from: onA.uuid, data: { room: 'elsewhere', from: 'forged' } })

    // one backplane subscription per room with members here, however many members
    const second = await wsMember(a.url, 'lobby')
    t.equal(transportOf(a.platform).relay.subscriptions, 1, 'two members on a, one subscription')
    second.ws.close()
    await second.closed
  })

  t.test('a frame from the backplane is held to the size a local member could send', async (t) => {
    const { a, b } = nodes
    const onA = await wsMember(a.url, 'bounded')
    const onB = await wsMember(b.url, 'bounded')
    t.teardown(() => {
      onA.ws.close()
      onB.ws.close()
    })
    await linked(onA, onB)
    // another publisher on the same Redis, as a compromised or misconfigured node would be
    const intruder = new RedisBackplane({ url: redis.url, node: 'intruder', logger: createLogger('silent') })
    intruder.start()
    t.teardown(() => intruder.close())
    await until(() => intruder.available(), 'the intruder connected')
    const relay = transportOf(b.platform).relay
    const refused = relay.refused
    const limit = b.platform.config.get('platform.transport.rooms.max-message-bytes')
    intruder.publish(relayTopic('/platform/rooms/bounded'), 'x'.repeat(limit * 6 + 2048))
    intruder.publish(relayTopic('/platform/rooms/bounded'), { not: 'a frame' })
    await until(() => relay.refused === refused + 2, 'both refused')
    speak(onA, { i: 1, after: true })
    await onB.inbox.type('message', (f) => f.data?.after === true)
    t.notOk(
      onB.inbox.all.some((f) => typeof f.raw === 'string' && f.raw.length > limit),
      'nothing oversized reached the member'
    )
  })

  t.test('resources and the overview count per node and in total', async (t) => {
    const { a, b } = nodes
    const members = [await wsMember(a.url, 'count'), await wsMember(b.url, 'count'), await wsMember(b.url, 'count')]
    t.teardown(() => {
      for (const m of members) m.ws.close()
    })
    const counts = async () => (await call(a, 'GET', '/resources/counts')).body as Record<string, any>
    let seen: Record<string, any> = {}
    for (let i = 0; i < 300; i++) {
      seen = await counts()
      const byNode = Object.fromEntries(seen.nodes.map((n: any) => [n.node, n.connections]))
      if (byNode['node-a'] === 1 && byNode['node-b'] === 2) break
      await new Promise((r) => setTimeout(r, 20))
    }
    t.match(seen, {
      node: 'node-a',
      connections: 3,
      nodes: [
        { node: 'node-a', state: 'up', connections: 1 },
        { node: 'node-b', state: 'up', connections: 2 }
      ]
    })
    const overview = (await call(a, 'GET', '/overview')).body as Record<string, any>
    t.equal(overview.connections, 1, "the overview's own count is this node's")
    t.match(overview.cluster, { connections: 3, nodes: [{ node: 'node-a' }, { node: 'node-b' }] })
    const listed = (await call(b, 'GET', '/resources')).body as Record<string, unknown>[]
    t.same(
      listed.map((r) => r.node),
      ['node-b', 'node-b'],
      'each resource says its node'
    )
  })

  t.test("the admin event stream carries the other node's events and resumes on another node", async (t) => {
    const { a, b } = nodes
    const watcher = await wsEvents(a.url, '', auth)
    t.teardown(() => watcher.close())
    // b sends its events once it hears that someone watches: keep making one until a sees it
    const fromB = (s: EventSubscriber) => s.inbox.all.filter((e) => e.node === 'node-b')
    for (let i = 0; i < 300 && fromB(watcher).length === 0; i++) {
      const m = await wsMember(b.url, 'events')
      m.ws.close()
      await m.closed
      await new Promise((r) => setTimeout(r, 20))
    }
    t.match(fromB(watcher)[0], { node: 'node-b', seq: Number })
    t.ok(
      watcher.inbox.all.some((e) => e.node === 'node-a'),
      "a's own events are there too"
    )

    // an SSE subscriber on a, then it goes; it comes back on b with the cursor a gave it
    const first = await sseEvents(a.url, '', auth)
    const onA = await wsMember(a.url, 'resume')
    await first.inbox.type('ResourceConnected', (e) => e.uuid === onA.uuid)
    // the events up to the cursor, read in one go: more may arrive until the close
    const n = first.idTexts.length
    const cursor = first.idTexts[n - 1]!
    const seenBefore = new Set(first.inbox.all.slice(0, n).map((e) => `${e.node}:${e.seq}`))
    t.match(cursor, /^node-a:\d+,node-b:\d+$/, 'the id names each node and its seq')
    first.close()
    // meanwhile, one event on each node
    const gapA = await wsMember(a.url, 'resume')
    const gapB = await wsMember(b.url, 'resume')
    t.teardown(() => {
      for (const m of [onA, gapA, gapB]) m.ws.close()
    })
    await watcher.inbox.type('ResourceConnected', (e) => e.uuid === gapB.uuid)
    await watcher.inbox.type('ResourceConnected', (e) => e.uuid === gapA.uuid)

    const again = await sseEvents(b.url, '?after=' + encodeURIComponent(cursor), auth)
    t.teardown(() => again.close())
    await again.inbox.type('ResourceConnected', (e) => e.uuid === gapA.uuid)
    await again.inbox.type('ResourceConnected', (e) => e.uuid === gapB.uuid)
    const replayed = again.inbox.all.map((e) => `${e.node}:${e.seq}`)
    t.same(
      replayed.filter((k) => seenBefore.has(k)),
      [],
      'nothing the subscriber had seen comes again'
    )
    t.equal(new Set(replayed).size, replayed.length, 'no event twice')
    t.match(
      again.idTexts.at(-1),
      /^node-a:\d+,node-b:\d+$/,
      'the ids go on naming each node, so the next resume works on any node'
    )

    t.equal((await call(b, 'GET', '/resources')).status, 200)
    const bad = await fetch(b.url + '/platform/admin/events?after=node-a:1,bad%20node:2', { headers: auth })
    t.equal(bad.status, 400, 'a malformed cursor is refused')
  })

  t.test('GET /api/admin/cluster lists the nodes, flags a different plugin set, shows a gone node down', async (t) => {
    const { a } = nodes
    // node c carries one more plugin than a and b (registered as the plugin host does after a load)
    const c = await node(t, 'node-c')
    c.platform.plugins.set(
      '/plugins/extra',
      {
        name: 'extra',
        version: '1.0.0',
        entry: 'index.js',
        sandbox: 'inline',
        permissions: { net: [], kv: false, env: [] },
        limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
      },
      inlineInstance(definePlugin({}), { log: c.platform.logger })
    )
    const view = async (p: TestPlatform) => (await call(p, 'GET', '/cluster')).body as Record<string, any>
    const states = (v: Record<string, any>) => v.nodes.map((n: any) => `${n.node}:${n.state}`)
    let got: Record<string, any> = {}
    // until a has heard all three, and c's heartbeat after the plugin came
    for (let i = 0; i < 300; i++) {
      got = await view(a)
      if (states(got).join() === 'node-a:up,node-b:up,node-c:up' && got.nodes[2].fingerprintDiffers === true) break
      await new Promise((r) => setTimeout(r, 20))
    }
    t.match(got, {
      node: 'node-a',
      clustered: true,
      backplane: { kind: 'redis', available: true },
      consistent: false
    })
    t.same(states(got), ['node-a:up', 'node-b:up', 'node-c:up'])
    const [ra, rb, rc] = got.nodes
    t.match(ra, { self: true, fingerprintDiffers: false })
    t.match(rb, {
      self: false,
      version: a.platform.version,
      startedAt: nodes.b.platform.node.startedAt,
      lastHeartbeat: String,
      connections: Number,
      runsOwned: 0,
      load: { cpus: Number, loadAverage: Number, eventLoopUtilization: Number, rssBytes: Number },
      fingerprintDiffers: false
    })
    t.equal(ra.fingerprint, rb.fingerprint, 'a and b agree')
    t.match(rc, { fingerprintDiffers: true }, 'c, with one more plugin, is flagged')

    // c stops: it says so, and is down at once; b goes silent: down after missed heartbeats
    await c.close()
    await nodes.b.platform.backplane().close()
    for (let i = 0; i < 300; i++) {
      got = await view(a)
      if (states(got).join() === 'node-a:up,node-b:down,node-c:down') break
      await new Promise((r) => setTimeout(r, 20))
    }
    t.same(states(got), ['node-a:up', 'node-b:down', 'node-c:down'])
  })
}

t.test('a node alone: the cluster view is that node', async (t) => {
  // with the interactions area, which adds the runs this node owns to its heartbeat
  const tp = await startTestPlatform(
    { 'platform.interactions.store': 'memory' },
    { install: (p: Platform) => installAreas(p, [...AREAS, webhooksArea, interactionsArea]) }
  )
  t.teardown(tp.close)
  const got = (await call(tp, 'GET', '/cluster')).body as Record<string, any>
  t.match(got, { node: tp.platform.node.id, clustered: false, backplane: { kind: 'in-process' }, consistent: true })
  t.equal(got.nodes.length, 1)
  t.match(got.nodes[0], { node: tp.platform.node.id, state: 'up', self: true, runsOwned: 0, fingerprintDiffers: false })
  t.same(
    tp.platform.extensions(NODE_COUNTS).map((c) => c.name),
    ['runsOwned'],
    'the interactions area reports its runs'
  )
})

t.test('a fingerprint follows the plugin set and policies, not their order nor the heartbeat', async (t) => {
  const a = fingerprintOf(['p@1:active', 'q@2:active'], ['pol:X:d1'])
  t.match(a, /^[0-9a-f]{16}$/)
  t.equal(fingerprintOf(['q@2:active', 'p@1:active'], ['pol:X:d1']), a, 'the order does not count')
  t.not(fingerprintOf(['p@1:active', 'q@2:active', 'r@1:active'], ['pol:X:d1']), a, 'one more plugin')
  t.not(fingerprintOf(['p@1:active', 'q@2:active'], ['pol:X:d2']), a, 'a changed policy')
  t.equal(fingerprintOf(['p@1:active', 'q@2:active'], ['pol:X:d1']), a, 'back to the first set: its digest again')
})
