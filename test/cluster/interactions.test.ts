// Interactions across the nodes of a cluster: one Postgres database and one redis-server shared by
// the whole file, nodes in this process (and one in a child process, to be killed with SIGKILL).
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'
import { createClient } from 'redis'
import WebSocket from 'ws'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { within } from '../helpers/within.js'
import { testPostgres } from '../helpers/postgres.js'
import { testRedis } from '../helpers/redis.js'
import { ALICE, BOB, startInteractions } from '../interactions/helpers.js'
import { STREAM, until } from '../interactions/stream-helpers.js'

// a Postgres cluster, a Redis, three platforms (one a child process that starts from dist/): on a
// loaded 2-core machine the file has taken 110 s of the default 120
t.setTimeout(240_000)

// a run's steps cross nodes through Redis and PostgreSQL: a loaded machine may take a while
const LONG = 60_000

const pg = await testPostgres(t)
const redis = pg === undefined ? undefined : await testRedis(t)

/** The model of every node in the file: each test scripts its turns with `hold`. */
const model = pg === undefined || redis === undefined ? undefined : await new OpenAiServer().start()
if (model !== undefined) t.teardown(() => model.close())

/** Turns of `deltas` text deltas, each held before delta `pause` until `release()` (or the test's end). */
function hold(t: Test, deltas: number, pause: number): { release: () => void } {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  t.teardown(release)
  model!.chat = () => ({
    stream: sseEvents([
      ...Array.from({ length: deltas }, (_, i) => deltaChunk({ content: `d${i} ` })),
      deltaChunk({}, 'stop')
    ]),
    pauseAt: { index: pause, until: held }
  })
  return { release }
}

/**
 * The config of a cluster node on the file's Postgres database `url` and Redis. Its lease is the
 * default (5 s) unless `leaseMs` says otherwise: a loaded machine may delay a renewal by a second,
 * and a live node that misses its lease loses its runs.
 */
const nodeConfig = (url: string, modelUrl: string, leaseMs = 5000): Record<string, unknown> => ({
  'platform.cluster.enabled': true,
  'platform.cluster.redis-url': redis!.url,
  'platform.cluster.lease-ms': leaseMs,
  'platform.postgres.url': url,
  'platform.interactions.text-coalesce-ms': 0,
  'platform.ai.runtime': 'openai',
  'platform.ai.openai.base-url': modelUrl,
  'platform.ai.openai.model': 'test-model'
})

/** A live stream over WebSocket: its frames as they come, and when the server closed it. */
function watch(base: string, id: string, token = ALICE): { frames: any[]; closed: Promise<number> } {
  const frames: any[] = []
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}${STREAM}?id=${id}`, {
    headers: { authorization: `Bearer ${token}` }
  })
  ws.on('message', (d) => frames.push(JSON.parse(String(d))))
  const closed = new Promise<number>((resolve, reject) => {
    ws.on('close', resolve)
    ws.on('error', reject)
  })
  return { frames, closed }
}

const stepSeqs = (frames: any[]): number[] =>
  frames.filter((f) => f.type === 'interaction-step').map((f) => f.step.seq as number)
const terminals = (frames: any[]): any[] => frames.filter((f) => f.type === 'interaction-terminal')

if (pg !== undefined && redis !== undefined && model !== undefined) {
  const url = await pg.database(t)
  // two nodes in this process, shared by the tests: A runs, B watches and cancels
  const a = await startInteractions(nodeConfig(url, model.url))
  t.teardown(a.close)
  const b = await startInteractions(nodeConfig(url, model.url))
  t.teardown(b.close)

  t.test('a run on node A, streamed from node B: every step once, in order, then the terminal', async (t) => {
    const turn = hold(t, 30, 5)
    const id = (await a.api.create({ message: 'long job', background: true })).body.id as string
    await until(async () => (await b.service.store.steps(id, -1)).length >= 5)
    // two viewers on B: one subscription to the run's topic between them
    const first = watch(b.url, id)
    const second = watch(b.url, id)
    await until(() => stepSeqs(first.frames).length >= 5 && stepSeqs(second.frames).length >= 5)
    const sub = createClient({ url: redis.url })
    await sub.connect()
    t.teardown(() => sub.close())
    const topic = `platform:interactions/steps/${id}`
    await until(async () => ((await sub.pubSubNumSub(topic))[topic] ?? 0) >= 1)
    t.equal((await sub.pubSubNumSub(topic))[topic], 1, 'B subscribed to the run’s topic (A, with no viewer, did not)')
    turn.release()
    await within(Promise.all([first.closed, second.closed]), "B's viewers get the end", LONG)
    const stored = (await b.api.get(id)).body
    t.equal(stored.status, 'COMPLETED')
    const all = stored.steps.map((s: { seq: number }) => s.seq)
    t.ok(all.length >= 31, `${all.length} steps stored: the 30 deltas and the completion`)
    for (const w of [first, second]) {
      t.same(stepSeqs(w.frames), all, 'every stored step exactly once, in seq order')
      t.same(
        terminals(w.frames).map((f) => f.status),
        ['COMPLETED'],
        'one terminal frame, last'
      )
      t.equal(w.frames.at(-1).type, 'interaction-terminal')
    }
    t.equal(b.service.feed.watched, 0, 'B forgets the run once its viewers are gone')
    await until(async () => ((await sub.pubSubNumSub(topic))[topic] ?? 0) === 0)
    t.pass('and drops its subscription')
  })

  t.test('a cancel on node B is persisted and stops the run on node A', async (t) => {
    hold(t, 30, 3)
    const id = (await a.api.create({ message: 'stop me', background: true })).body.id as string
    await until(async () => (await b.service.store.steps(id, -1)).length >= 3)
    const viewer = watch(b.url, id)
    t.equal((await b.api.call('POST', `/api/interactions/${id}/cancel`, { token: BOB })).status, 404, "not bob's")
    const cancel = await b.api.call('POST', `/api/interactions/${id}/cancel`, { token: ALICE })
    t.same([cancel.status, cancel.body], [200, { status: 'cancel requested' }])
    await within(viewer.closed, "B's viewer gets the cancelled end", LONG)
    t.same(
      terminals(viewer.frames).map((f) => f.status),
      ['CANCELLED'],
      "B's viewer gets A's end once"
    )
    const ended = await b.api.settled(id)
    t.equal(ended.status, 'CANCELLED', 'A stopped the run')
    t.same(
      ended.steps.filter((s) => s.type === 'completion' || s.type === 'error').map((s) => s.text),
      ['cancelled by the client'],
      'one terminal step, written by its owner'
    )
    await until(() => a.service.inFlight === 0)
    t.pass('nothing runs on A any more')
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const row = await c.query('SELECT cancel_requested, owner_node FROM platform_interactions WHERE id = $1', [id])
    t.same(row.rows, [{ cancel_requested: true, owner_node: a.platform.node.id }], 'the cancel was persisted')
    const again = await b.api.call('POST', `/api/interactions/${id}/cancel`, { token: ALICE })
    t.equal(again.status, 404, 'an ended run is not cancelled')
  })

  t.test('an idempotency key holds across nodes', async (t) => {
    const turn = hold(t, 2, 0)
    const body = { message: 'once only', background: true }
    const key = { 'idempotency-key': 'cross-node-1' }
    const first = await a.api.create(body, ALICE, key)
    const retry = await b.api.create(body, ALICE, key)
    t.equal(retry.body.id, first.body.id, 'the retry on another node gets the first run')
    const other = await b.api.create({ ...body, message: 'another body' }, ALICE, key)
    t.equal(other.status, 409, 'another body under the same key is refused on that node too')
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const n = await c.query("SELECT count(*)::int AS n FROM platform_interactions WHERE header->>'id' = $1", [
      first.body.id
    ])
    t.same(n.rows, [{ n: 1 }])
    turn.release()
    await b.api.settled(first.body.id)
  })

  // node A in a child process (built dist/), killed with SIGKILL mid-run
  const child = `
const { startPlatform } = await import(${JSON.stringify(new URL('../../dist/runtime/platform.js', import.meta.url).href)})
const { installAreas, loadConfig } = await import(${JSON.stringify(new URL('../../dist/runtime/areas.js', import.meta.url).href)})
const arg = JSON.parse(process.argv[1])
const config = loadConfig({ env: {}, cwd: arg.dir, overrides: {
  'platform.server.port': 0, 'platform.server.host': '127.0.0.1', 'platform.data-dir': arg.dir,
  'platform.log-level': 'error', 'platform.plugins.dirs': [], ...arg.config } })
const { url } = await startPlatform({ config, install: installAreas, logDestination: process.stderr })
process.stdout.write(JSON.stringify({ url }) + '\\n')
`

  t.test('a node killed mid-run: another marks its run FAILED, node lost; viewers get one end', async (t) => {
    hold(t, 30, 4)
    const dir = mkdtempSync(join(tmpdir(), 'platform-cluster-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    // a short lease: the test waits for it to expire
    const config = {
      ...nodeConfig(url, model.url, 1000),
      'platform.interactions.http-write-enabled': true,
      'platform.auth.tokens': [{ token: ALICE, principal: 'alice' }]
    }
    const proc = spawn(
      process.execPath,
      ['--no-node-snapshot', '--input-type=module', '-e', child, JSON.stringify({ dir, config })],
      { stdio: ['ignore', 'pipe', 'inherit'] }
    )
    t.teardown(() => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    })
    const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()))
    const aUrl = await within(
      new Promise<string>((resolve, reject) => {
        let out = ''
        proc.stdout!.on('data', (d: Buffer) => {
          out += d.toString()
          const line = out.split('\n')[0]
          if (out.includes('\n')) resolve((JSON.parse(line!) as { url: string }).url)
        })
        proc.on('exit', (code) => reject(new Error(`node A exited ${String(code)} before it served`)))
      }),
      'node A serves',
      LONG
    )
    const created = await fetch(`${aUrl}/api/interactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'doomed', background: true })
    })
    const id = ((await created.json()) as { id: string }).id
    await until(async () => (await b.service.store.steps(id, -1)).length >= 4)
    const viewer = watch(b.url, id)
    await until(() => stepSeqs(viewer.frames).length >= 4)
    proc.kill('SIGKILL')
    await within(exited, 'node A exits', LONG)
    // B sweeps (twice per lease of its own) once A's lease (1 s) has expired
    await within(viewer.closed, "B ends its viewer's stream", LONG)
    t.same(
      terminals(viewer.frames).map((f) => [f.status, f.errorMessage]),
      [['FAILED', 'interrupted: node lost']],
      "B's viewer gets exactly one terminal frame"
    )
    const ended = (await b.api.get(id)).body
    t.match(ended, { status: 'FAILED', errorMessage: 'interrupted: node lost' })
    const ends = ended.steps.filter((s) => s.type === 'completion' || s.type === 'error')
    t.same(
      ends.map((s) => s.text),
      ['interrupted: node lost'],
      'one terminal step'
    )
    t.same(
      stepSeqs(viewer.frames),
      ended.steps.map((s: { seq: number }) => s.seq),
      'the viewer saw every step once'
    )
  })
}
