import { join } from 'node:path'
import { open } from 'lmdb'
import { Pool } from 'pg'
import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { Store } from '../../runtime/store/index.js'
import {
  LmdbInteractionStore,
  PostgresInteractionStore,
  type InteractionHeader,
  type InteractionStep
} from '../../runtime/interactions/index.js'
import { cpuSecondsOf, treeCpuSeconds } from '../lib/proc.js'
import { percentile } from '../lib/stats.js'
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from '../lib/postgres-cluster.js'

interface Measured {
  stepsPerSec: number
  cpuUsPerStep: number
  /** The Postgres server's CPU (postmaster and backends) per step; absent for LMDB. */
  serverCpuUsPerStep?: number
  serialP50Ms: number
  serialP99Ms: number
}

/** Appends `seq` of the interaction `id`: resolves once durable. */
type Append = (id: string, seq: number) => Promise<void>

const at = new Date().toISOString()
// a coalesced text delta as the capture writes it: the common step of every turn
const stepOf = (seq: number): InteractionStep => ({
  seq,
  type: 'text',
  text: `delta ${seq}: the quick brown fox jumps over the lazy dog`,
  toolName: null,
  data: {},
  usage: null,
  createdAt: at
})
const headerOf = (id: string): InteractionHeader => ({
  id,
  parentId: null,
  conversationId: 'conv-bench',
  agentId: null,
  userId: 'bench',
  model: null,
  status: 'RUNNING',
  background: true,
  store: true,
  finalText: null,
  usage: null,
  errorMessage: null,
  createdAt: at,
  updatedAt: at
})

/**
 * Part (a) of the interactions benchmark: durable step appends. Ours is `appendStep` of the LMDB
 * store (checks, one transaction that refuses a step of an unknown interaction and ignores a
 * repeated seq) against raw lmdb-js `put` of the same step under the same key with lmdb's
 * default durable commits; and `appendStep` of the Postgres store against a raw `pg` insert of
 * the same JSON into the same table, on a throwaway local cluster. Two shapes: a burst (many
 * steps in flight, as 1 000 concurrent runs produce) and one step awaited at a time.
 */
const scenario: Scenario = {
  name: 'interactions',
  description:
    'Interaction store step appends: LMDB store vs raw lmdb-js put, Postgres store vs raw pg insert (CPU per durable step, burst and one at a time)',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const lmdbBurst = opts.quick ? 20_000 : 100_000
    const pgBurst = opts.quick ? 3_000 : 20_000
    const serial = opts.quick ? 300 : 2000
    const notes = [
      `LMDB: ${LMDB_BURSTS} bursts of ${lmdbBurst} appends issued at once per subject, ours and the raw peer in turns (order swapped each round, both warmed first; the median burst of each), then ${serial} awaited one at a time; interactions of 1 000 steps`,
      `Postgres: bursts of ${pgBurst} appends on a pool of 10, then ${serial} one at a time; CPU is the harness process's (pg's protocol work) and the server's (postmaster and backends) apart`
    ]

    const [ours, raw] = await measureLmdbPair(
      opts,
      async (dir, ids) => {
        const store = new Store(dir)
        const s = new LmdbInteractionStore(store)
        await s.start()
        for (const id of ids) await s.save(headerOf(id))
        return { append: (id, seq) => s.appendStep(id, stepOf(seq)), close: () => store.close() }
      },
      // lmdb-js as the platform's Store opens it (structures shared), the same database name, key and value
      async (dir) => {
        const root = open({ path: dir, maxDbs: 64, compression: false, noSubdir: false })
        const db = root.openDB<InteractionStep, [string, number]>({
          name: 'interaction-steps',
          encoding: 'msgpack',
          sharedStructuresKey: Symbol.for('structures')
        })
        return { append: (id, seq) => db.put([id, seq], stepOf(seq)).then(() => undefined), close: () => root.close() }
      }
    )
    const rows: ResultRow[] = [
      row('lmdb.cpu_us_per_step', 'LMDB store CPU per step (burst)', 'µs', 'lower', ours.cpuUsPerStep, {
        'lmdb-raw': raw.cpuUsPerStep
      }),
      row(
        'lmdb.steps_per_s',
        'LMDB store steps/s (burst)',
        '/s',
        'higher',
        ours.stepsPerSec,
        { 'lmdb-raw': raw.stepsPerSec },
        false
      ),
      row(
        'lmdb.serial_p99_ms',
        'LMDB store commit latency p99 (one at a time)',
        'ms',
        'lower',
        ours.serialP99Ms,
        { 'lmdb-raw': raw.serialP99Ms },
        false
      )
    ]
    const details: Record<string, unknown> = { lmdb: { ours, raw } }
    line(opts, 'lmdb store', ours)
    line(opts, 'lmdb raw  ', raw)

    const bin = postgresBinDir()
    if (bin === undefined) {
      notes.push('Postgres rows not measured: no PostgreSQL installed (initdb not found)')
    } else {
      const cluster = await startPostgresCluster(bin)
      try {
        const pgOurs = await measurePostgres(cluster, pgBurst, serial, 'ours')
        const pgRaw = await measurePostgres(cluster, pgBurst, serial, 'raw')
        line(opts, 'pg store  ', pgOurs)
        line(opts, 'pg raw    ', pgRaw)
        details.postgres = { ours: pgOurs, raw: pgRaw }
        rows.push(
          row(
            'postgres.cpu_us_per_step',
            'Postgres store client CPU per step (burst)',
            'µs',
            'lower',
            pgOurs.cpuUsPerStep,
            {
              'pg-raw': pgRaw.cpuUsPerStep
            }
          ),
          row(
            'postgres.server_cpu_us_per_step',
            'Postgres server CPU per step (burst)',
            'µs',
            'lower',
            pgOurs.serverCpuUsPerStep,
            { 'pg-raw': pgRaw.serverCpuUsPerStep! },
            false
          ),
          row(
            'postgres.steps_per_s',
            'Postgres store steps/s (burst)',
            '/s',
            'higher',
            pgOurs.stepsPerSec,
            { 'pg-raw': pgRaw.stepsPerSec },
            false
          ),
          row(
            'postgres.serial_p99_ms',
            'Postgres store commit latency p99 (one at a time)',
            'ms',
            'lower',
            pgOurs.serialP99Ms,
            { 'pg-raw': pgRaw.serialP99Ms },
            false
          )
        )
      } finally {
        await cluster.stop()
      }
    }
    return { scenario: 'interactions', description: this.description, rows, notes, details }
  }
}

function line(opts: RunOptions, who: string, m: Measured): void {
  const server = m.serverCpuUsPerStep === undefined ? '' : ` + ${m.serverCpuUsPerStep.toFixed(1)} µs server`
  opts.log(
    `  ${who}: ${m.cpuUsPerStep.toFixed(2)} µs CPU/step${server}, ${Math.round(m.stepsPerSec)} steps/s burst, p99 ${m.serialP99Ms.toFixed(2)} ms one at a time`
  )
}

type OpenLmdb = (dir: string, ids: string[]) => Promise<{ append: Append; close(): Promise<void> }>

// bursts per subject, taken in turns: a single burst each, ours first, read whichever ran warmer
const LMDB_BURSTS = 5

/**
 * Ours and the raw peer side by side: each opened (`open(dir)` gives the subject, with the ids it
 * may append to already saved, and its close) and warmed, then bursts in turns, the order swapped
 * each round; the median burst of each, then the one-at-a-time latencies.
 */
async function measureLmdbPair(opts: RunOptions, ours: OpenLmdb, raw: OpenLmdb): Promise<[Measured, Measured]> {
  const burst = opts.quick ? 20_000 : 100_000
  const serial = opts.quick ? 300 : 2000
  const ids = idsFor(burst * LMDB_BURSTS + serial)
  const subjects = [
    await ours(join(opts.tmpDir, 'lmdb-ours'), ids),
    await raw(join(opts.tmpDir, 'lmdb-raw'), ids)
  ] as const
  try {
    const appenders = subjects.map((x) => sequential(x.append, ids))
    for (const next of appenders) await Promise.all(Array.from({ length: 2000 }, next))
    const bursts: { cpu: number; sec: number }[][] = [[], []]
    for (let r = 0; r < LMDB_BURSTS; r++)
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) bursts[i]!.push(await timeBurst(appenders[i]!, burst, undefined))
    const out = await Promise.all(
      [0, 1].map(async (i) => {
        const cpu = percentile(
          bursts[i]!.map((b) => b.cpu),
          50
        )
        const sec = percentile(
          bursts[i]!.map((b) => b.sec),
          50
        )
        return {
          cpuUsPerStep: (cpu * 1e6) / burst,
          stepsPerSec: burst / sec,
          ...(await serialLatency(appenders[i]!, serial))
        }
      })
    )
    return [out[0]!, out[1]!]
  } finally {
    for (const x of subjects) await x.close()
  }
}

// the warm-up's 2 000 steps, then the measured ones, 1 000 to an interaction
const idsFor = (steps: number) => Array.from({ length: Math.ceil((steps + 2000) / 1000) }, (_, i) => `int-bench-${i}`)

async function measurePostgres(
  cluster: PostgresCluster,
  burst: number,
  serial: number,
  name: string
): Promise<Measured> {
  const admin = quietPool(new Pool({ connectionString: cluster.url, max: 1 }))
  await admin.query(`CREATE DATABASE bench_${name}`)
  const url = cluster.url.replace(/\/postgres$/, `/bench_${name}`)
  // the schema comes from the store in both cases, so raw inserts hit the same table and indexes
  const s = new PostgresInteractionStore({ url, node: 'bench', poolSize: 10 })
  await s.start()
  const ids = idsFor(burst + serial)
  for (const id of ids) await s.save(headerOf(id))
  const pool = quietPool(new Pool({ connectionString: url, max: 10 }))
  try {
    const append: Append =
      name === 'ours'
        ? (id, seq) => s.appendStep(id, stepOf(seq))
        : (id, seq) =>
            pool
              .query('INSERT INTO platform_interaction_steps (interaction_id, seq, step) VALUES ($1, $2, $3)', [
                id,
                seq,
                JSON.stringify(stepOf(seq))
              ])
              .then(() => undefined)
    return await measure(append, ids, burst, serial, cluster.pid)
  } finally {
    await pool.end()
    await s.stop()
    await admin.end()
  }
}

/**
 * An idle client of a pool whose server went away emits `error` on the pool; with no listener
 * that ends the whole bench. The queries in flight fail on their own, which fails the scenario.
 */
function quietPool(pool: Pool): Pool {
  pool.on('error', (err) => {
    console.error(`  pg pool: ${err.message}`)
  })
  return pool
}

async function measure(
  append: Append,
  ids: string[],
  burst: number,
  serial: number,
  serverPid: number | undefined
): Promise<Measured> {
  const next = sequential(append, ids)
  await Promise.all(Array.from({ length: 2000 }, next))
  const b = await timeBurst(next, burst, serverPid)
  return {
    stepsPerSec: burst / b.sec,
    cpuUsPerStep: (b.cpu * 1e6) / burst,
    ...(b.serverCpu === undefined ? {} : { serverCpuUsPerStep: (b.serverCpu * 1e6) / burst }),
    ...(await serialLatency(next, serial))
  }
}

/** Appends of one interaction's steps in seq order, 1 000 to each, as concurrent runs write them. */
function sequential(append: Append, ids: string[]): () => Promise<void> {
  let n = 0
  return () => {
    const i = n++
    return append(ids[Math.floor(i / 1000)]!, i % 1000)
  }
}

/** `burst` appends issued at once, awaited together: this process's CPU (and the server's) and the wall time. */
async function timeBurst(
  next: () => Promise<void>,
  burst: number,
  serverPid: number | undefined
): Promise<{ cpu: number; sec: number; serverCpu?: number }> {
  const c0 = cpuSecondsOf('self')
  const s0 = serverPid === undefined ? 0 : treeCpuSeconds(serverPid)
  const t0 = performance.now()
  const ps: Promise<void>[] = new Array(burst)
  for (let i = 0; i < burst; i++) ps[i] = next()
  await Promise.all(ps)
  const sec = (performance.now() - t0) / 1000
  const cpu = cpuSecondsOf('self') - c0
  return serverPid === undefined ? { cpu, sec } : { cpu, sec, serverCpu: treeCpuSeconds(serverPid) - s0 }
}

async function serialLatency(
  next: () => Promise<void>,
  serial: number
): Promise<{ serialP50Ms: number; serialP99Ms: number }> {
  const lat: number[] = []
  for (let i = 0; i < serial; i++) {
    const t = performance.now()
    await next()
    lat.push(performance.now() - t)
  }
  lat.sort((a, b) => a - b)
  return {
    serialP50Ms: lat[Math.floor(lat.length * 0.5)]!,
    serialP99Ms: lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)]!
  }
}

export default scenario
