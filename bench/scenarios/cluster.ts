import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, sleep, startPlatform, treeCpuSeconds, type ServerProcess } from '../lib/proc.js'
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from '../lib/postgres-cluster.js'
import { redisServerBin, startRedisServer, type RedisServer } from '../lib/redis-server.js'
import { WsLoad } from '../lib/ws-load.js'

const PAD = 64
const BURST = 16

/** Interactions as the other interaction scenarios run them: demo runtime, one principal, every delta a step. */
const INTERACTION_FLAGS = [
  ['platform.interactions.http-write-enabled', 'true'],
  ['platform.interactions.demo-principal', 'bench'],
  ['platform.interactions.quota.runs-in-flight', '0'],
  ['platform.interactions.quota.bytes-per-minute', '0'],
  ['platform.interactions.text-coalesce-ms', '0']
].flatMap(([k, v]) => ['--set', `${k}=${v}`])

/** A message the demo runtime answers with about `words` text deltas (it echoes it word by word). */
const message = (words: number): string => Array.from({ length: words }, (_, i) => `w${i}`).join(' ')

interface Shared {
  pg: PostgresCluster
  redis: RedisServer
  /** A fresh database per subject: one run's rows never slow the next. */
  database(): Promise<string>
}

interface Rooms {
  members: number
  deliveries: number
  cpuUsPerDelivery: number
  /** Redis's CPU per frame a node published (three nodes only). */
  redisCpuUsPerMessage?: number
  /** Latency of the members on the sender's node, and of those on the other nodes. */
  localP50Ms: number
  localP99Ms: number
  remoteP50Ms?: number
  remoteP99Ms?: number
  timeouts: number
}

interface Steps {
  steps: number
  cpuUsPerStep: number
  pgCpuUsPerStep?: number
  redisCpuUsPerStep?: number
  broken: number
}

interface Runs {
  nodes: number
  runs: number
  runsPerSec: number
  broken: number
}

/**
 * Cluster mode's costs, on a throwaway PostgreSQL and Redis started here: (a) a room of N silent
 * members spread over three nodes, one member sending bursts, against the same room on one node
 * (server CPU per delivery, the three nodes' together; delivery latency on the sender's node and
 * across nodes); (b) what a step of a background run costs the node in cluster mode (Postgres
 * store, steps published on the backplane) against LMDB on one node, every run watched live; (c)
 * background runs per second that three nodes sustain against one, on the same database.
 */
const scenario: Scenario = {
  name: 'cluster',
  description:
    'Cluster mode: a room over 3 nodes vs 1 node (CPU per delivery, cross-node latency), CPU per interaction step clustered vs LMDB, background runs/s on 3 nodes vs 1',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const pgBin = postgresBinDir()
    const redisBin = redisServerBin()
    // failed, not skipped: a machine that benches cluster mode must have both
    if (pgBin === undefined) throw new Error('PostgreSQL is not installed (no initdb): apt-get install postgresql')
    if (redisBin === undefined) throw new Error('redis-server is not installed: apt-get install redis-server')
    const pg = await startPostgresCluster(pgBin)
    let redis: RedisServer | undefined
    try {
      redis = await startRedisServer(redisBin)
      let n = 0
      const shared: Shared = {
        pg,
        redis,
        database: async () => {
          const name = `bench_cluster_${n++}`
          const { Client } = await import('pg')
          const c = new Client({ connectionString: pg.url })
          await c.connect()
          await c.query(`CREATE DATABASE ${name}`)
          await c.end()
          return pg.url.replace(/\/postgres$/, `/${name}`)
        }
      }
      return await measureAll(opts, shared)
    } finally {
      await redis?.remove()
      await pg.stop()
    }
  }
}

export default scenario

async function measureAll(opts: RunOptions, shared: Shared): Promise<ScenarioResult> {
  const members = Number(process.env.BENCH_CLUSTER_MEMBERS ?? (opts.quick ? 1000 : 3000))
  const turns = opts.quick ? 40 : 200
  const words = 100
  const notes: string[] = []

  opts.log('  (a) one room over three nodes against one node')
  const oneRoom = await rooms(opts, shared, 1, members)
  const threeRooms = await rooms(opts, shared, 3, members)
  notes.push(
    `(a) ${members} members joined silently (presence=false), bursts of ${BURST} frames (${PAD + 30} bytes) from one member, the next burst once every member on every node got the last one; three nodes: the members split evenly, the sender on the first; CPU = every node process together (Redis apart: ${fmt(threeRooms.redisCpuUsPerMessage)} µs of redis-server CPU per frame published)`
  )

  opts.log('  (b) CPU per interaction step, clustered against LMDB on one node')
  const lmdb = await steps(opts, shared, false, turns, words)
  const clustered = await steps(opts, shared, true, turns, words)
  notes.push(
    `(b) ${turns} background turns of ~${words} deltas started at once on one node, each watched by a WebSocket subscriber; CPU of the node process per step; clustered adds PostgreSQL's CPU (${fmt(clustered.pgCpuUsPerStep)} µs per step) and Redis's (${fmt(clustered.redisCpuUsPerStep)} µs) beside it`
  )

  opts.log('  (c) background runs per second, three nodes against one')
  const runsOne = await runs(opts, shared, 1)
  const runsThree = await runs(opts, shared, 3)
  notes.push(
    `(c) background turns of 20 deltas kept ${RUN_CONCURRENCY} in flight, each created on the next node in turn and read to its end over SSE on the node that created it; both sides clustered on one PostgreSQL and Redis; on a 2-core machine three nodes share the cores the one node had, so this shows the cost of coordination more than a gain`
  )
  const broken =
    clustered.broken + lmdb.broken + runsOne.broken + runsThree.broken + oneRoom.timeouts + threeRooms.timeouts
  if (broken > 0) notes.push(`${broken} streams with a gap or failure, or bursts not fully delivered: figures suspect`)

  const rows: ResultRow[] = [
    row(
      'rooms.cpu_us_per_delivery',
      'server CPU per delivery, room over 3 nodes (peer: the same room on 1 node)',
      'µs',
      'lower',
      threeRooms.cpuUsPerDelivery,
      { 'one-node': oneRoom.cpuUsPerDelivery }
    ),
    row(
      'rooms.cross_node_p50_ms',
      'cross-node delivery latency p50 (peer: same node)',
      'ms',
      'lower',
      threeRooms.remoteP50Ms,
      { 'one-node': oneRoom.localP50Ms },
      false
    ),
    row(
      'rooms.cross_node_p99_ms',
      'cross-node delivery latency p99 (peer: same node)',
      'ms',
      'lower',
      threeRooms.remoteP99Ms,
      { 'one-node': oneRoom.localP99Ms },
      false
    ),
    row(
      'steps.cpu_us_per_step',
      'node CPU per interaction step, clustered (peer: LMDB on one node)',
      'µs',
      'lower',
      clustered.cpuUsPerStep,
      { lmdb: lmdb.cpuUsPerStep },
      false
    ),
    row(
      'steps.added_cpu_us_per_step',
      'CPU added per step by cluster mode: node, PostgreSQL and Redis together, less LMDB',
      'µs',
      'lower',
      clustered.cpuUsPerStep + (clustered.pgCpuUsPerStep ?? 0) + (clustered.redisCpuUsPerStep ?? 0) - lmdb.cpuUsPerStep,
      {},
      false
    ),
    row(
      'runs.per_s',
      'background runs/s sustained by 3 nodes (peer: 1 node)',
      '/s',
      'higher',
      runsThree.runsPerSec,
      { 'one-node': runsOne.runsPerSec },
      false
    )
  ]
  return {
    scenario: 'cluster',
    description: scenario.description,
    rows,
    notes,
    details: {
      rooms: { one: oneRoom, three: threeRooms },
      steps: { lmdb, clustered },
      runs: { one: runsOne, three: runsThree }
    }
  }
}

const fmt = (x: number | undefined) => (x === undefined ? '?' : x.toFixed(2))

/** `count` nodes of one cluster on a fresh database (or one plain node, not clustered, when `count` is 0). */
async function nodes(opts: RunOptions, shared: Shared, count: number, extra: string[]): Promise<ServerProcess[]> {
  if (count === 0) return [await startPlatform(opts.root, opts.tmpDir, extra)]
  const db = await shared.database()
  const out: ServerProcess[] = []
  try {
    for (let i = 0; i < count; i++)
      out.push(
        await startPlatform(opts.root, opts.tmpDir, [
          '--set',
          'platform.cluster.enabled=true',
          '--set',
          `platform.cluster.node-id=bench-${i + 1}`,
          '--set',
          `platform.cluster.redis-url=${shared.redis.url}`,
          '--set',
          `platform.postgres.url=${db}`,
          ...extra
        ])
      )
    // every node has reached Redis before anything is measured
    for (const n of out)
      for (let i = 0; i < 500; i++) {
        const r = (await (await fetch(`${n.url}/readyz`)).json()) as { checks?: Record<string, string> }
        if (r.checks?.backplane === 'UP') break
        await sleep(20)
      }
    return out
  } catch (e) {
    await Promise.all(out.map((s) => s.stop()))
    throw e
  }
}

const cpuOf = (servers: ServerProcess[]) => servers.reduce((a, s) => a + s.cpuSeconds(), 0)
const redisCpu = (shared: Shared) => (shared.redis.pid === undefined ? 0 : treeCpuSeconds(shared.redis.pid))

async function rooms(opts: RunOptions, shared: Shared, count: 1 | 3, members: number): Promise<Rooms> {
  const flags = ['--set', 'platform.transport.rooms.max-messages-per-second=0', ...NO_ADDRESS_CAPS]
  const servers = await nodes(opts, shared, count === 1 ? 0 : 3, flags)
  const loads: WsLoad[] = []
  try {
    for (const [i, s] of servers.entries()) {
      const share = Math.floor(members / servers.length) + (i < members % servers.length ? 1 : 0)
      const { load, ok, error } = await WsLoad.open({
        url: `${s.url.replace(/^http/, 'ws')}/platform/rooms/bench?presence=false`,
        connections: share,
        threads: 1,
        concurrency: 64,
        sends: i === 0
      })
      loads.push(load)
      if (ok < share) throw new Error(`only ${ok} of ${share} members joined node ${i + 1}: ${error ?? ''}`)
    }
    const [first, ...others] = loads as [WsLoad, ...WsLoad[]]
    // the other nodes subscribe to the room when its first member joins there: wait until a burst reaches all
    for (let i = 0; i < 50 && !(await first.burst(1, PAD, 2000, others)); i++);
    const run = async (sec: number) => {
      let timeouts = 0
      let sent = 0
      const end = performance.now() + sec * 1000
      while (performance.now() < end && !opts.signal.aborted && timeouts <= 3) {
        sent += BURST
        if (!(await first.burst(BURST, PAD, 10_000, others))) timeouts++
      }
      return { timeouts, sent }
    }
    await run(opts.warmupSec)
    for (const l of loads) await l.stats(true)
    const cpu0 = cpuOf(servers)
    const redis0 = redisCpu(shared)
    const sent0 = performance.now()
    const { timeouts, sent } = await run(opts.durationSec)
    const wall = (performance.now() - sent0) / 1000
    const cpu = cpuOf(servers) - cpu0
    const redis = redisCpu(shared) - redis0
    const [local, ...remote] = await Promise.all(loads.map((l) => l.stats(true)))
    const deliveries = [local!, ...remote].reduce((a, s) => a + s.deliveries, 0)
    const remoteDeliveries = remote.reduce((a, s) => a + s.deliveries, 0)
    const m: Rooms = {
      members,
      deliveries,
      cpuUsPerDelivery: (cpu * 1e6) / Math.max(1, deliveries),
      localP50Ms: local!.p50Us / 1000,
      localP99Ms: local!.p99Us / 1000,
      timeouts
    }
    if (remote.length > 0) {
      // the slowest of the other nodes: what a member there sees
      m.remoteP50Ms = Math.max(...remote.map((s) => s.p50Us)) / 1000
      m.remoteP99Ms = Math.max(...remote.map((s) => s.p99Us)) / 1000
      m.redisCpuUsPerMessage = (redis * 1e6) / Math.max(1, sent)
    }
    opts.log(
      `    ${count} node(s): ${Math.round(deliveries / wall)} deliveries/s, ${m.cpuUsPerDelivery.toFixed(3)} CPU µs/delivery, p50/p99 ${m.localP50Ms.toFixed(2)}/${m.localP99Ms.toFixed(2)} ms same node${remote.length > 0 ? `, ${fmt(m.remoteP50Ms)}/${fmt(m.remoteP99Ms)} ms across nodes (${remoteDeliveries} deliveries)` : ''}`
    )
    return m
  } finally {
    await Promise.all(loads.map((l) => l.close()))
    await Promise.all(servers.map((s) => s.stop()))
  }
}

async function steps(
  opts: RunOptions,
  shared: Shared,
  clustered: boolean,
  turns: number,
  words: number
): Promise<Steps> {
  const store = clustered ? [] : ['--set', 'platform.interactions.store=lmdb']
  const [server] = await nodes(opts, shared, clustered ? 1 : 0, [...INTERACTION_FLAGS, ...store])
  try {
    // warm-up: a few turns through every path before the window
    await watchedTurns(server!.url, 4, words)
    const cpu0 = server!.cpuSeconds()
    const pg0 = treeCpuSeconds(shared.pg.pid)
    const redis0 = redisCpu(shared)
    const { steps, broken } = await watchedTurns(server!.url, turns, words)
    const cpu = server!.cpuSeconds() - cpu0
    const per = (s: number) => (s * 1e6) / Math.max(1, steps)
    const m: Steps = { steps, cpuUsPerStep: per(cpu), broken }
    if (clustered) {
      m.pgCpuUsPerStep = per(treeCpuSeconds(shared.pg.pid) - pg0)
      m.redisCpuUsPerStep = per(redisCpu(shared) - redis0)
    }
    opts.log(
      `    ${clustered ? 'clustered' : 'lmdb     '}: ${steps} steps, ${m.cpuUsPerStep.toFixed(1)} µs node CPU/step${clustered ? ` + ${fmt(m.pgCpuUsPerStep)} PostgreSQL + ${fmt(m.redisCpuUsPerStep)} Redis` : ''}`
    )
    return m
  } finally {
    await server!.stop()
  }
}

/** `n` background turns started at once, each read to its end over SSE: the steps seen and the streams broken. */
async function watchedTurns(url: string, n: number, words: number): Promise<{ steps: number; broken: number }> {
  let steps = 0
  let broken = 0
  await Promise.all(
    Array.from({ length: n }, async () => {
      const r = await readTurn(url, url, words)
      steps += r.steps
      if (!r.ok) broken++
    })
  )
  return { steps, broken }
}

/** Creates a background turn on `createOn` and reads its stream on `readOn` to the terminal frame. */
async function readTurn(createOn: string, readOn: string, words: number): Promise<{ steps: number; ok: boolean }> {
  const res = await fetch(`${createOn}/api/interactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: message(words), background: true })
  })
  if (res.status !== 200) return { steps: 0, ok: false }
  const { id } = (await res.json()) as { id: string }
  const text = await (await fetch(`${readOn}/platform/interactions-stream?id=${id}`)).text()
  let steps = 0
  let next = 0
  let ok = false
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue
    const f = JSON.parse(line.slice(6)) as { type: string; step?: { seq: number }; status?: string }
    if (f.type === 'interaction-step') {
      if (f.step!.seq !== next) return { steps, ok: false }
      next++
      steps++
    } else ok = f.status === 'COMPLETED'
  }
  return { steps, ok }
}

const RUN_CONCURRENCY = 16

async function runs(opts: RunOptions, shared: Shared, count: 1 | 3): Promise<Runs> {
  const servers = await nodes(opts, shared, count, INTERACTION_FLAGS)
  try {
    let turn = 0
    let done = 0
    let broken = 0
    const go = async (until: number, counting: boolean) => {
      while (performance.now() < until && !opts.signal.aborted) {
        const s = servers[turn++ % servers.length]!
        const r = await readTurn(s.url, s.url, 20)
        if (!r.ok) broken++
        else if (counting) done++
      }
    }
    const window = async (sec: number, counting: boolean) => {
      const until = performance.now() + sec * 1000
      await Promise.all(Array.from({ length: RUN_CONCURRENCY }, () => go(until, counting)))
    }
    await window(opts.warmupSec, false)
    const t0 = performance.now()
    await window(opts.durationSec, true)
    const wall = (performance.now() - t0) / 1000
    const m: Runs = { nodes: count, runs: done, runsPerSec: done / wall, broken }
    opts.log(`    ${count} node(s): ${m.runsPerSec.toFixed(1)} background runs/s (${done} in ${wall.toFixed(1)} s)`)
    return m
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
  }
}
