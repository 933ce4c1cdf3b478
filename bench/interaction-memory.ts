/**
 * What one in-flight interaction holds in the server, measured after full GCs rather than read
 * off a peak RSS that mostly counts garbage not yet collected. The real platform runs in this
 * process (memory or LMDB store, demo runtime, every delta a step); a forked client process
 * creates N background interactions over HTTP and watches each over its own WebSocket. The demo
 * runtime's stream is held at two gates, so every turn is in flight at a known point:
 *   base     platform warmed up (a few turns run end to end), nothing in flight
 *   started  N turns in flight, each watched, no step yet
 *   stepped  the same N turns, each with K steps delivered to its watcher
 *   ended    every turn completed and every watcher closed (what is left is a leak)
 * Each point is read after global.gc(): V8 heap used, external memory, the resident pages of the
 * LMDB map, and RSS. "In flight, beyond its steps" is the heap and external memory per turn at
 * stepped less that at ended: what a turn holds because it runs, not what it leaves stored.
 *
 *   npx tsc -p tsconfig.json && node --no-node-snapshot --expose-gc dist/bench/interaction-memory.js \
 *     [--n 1000] [--steps 200] [--store lmdb|memory] [--snapshot]
 * --snapshot also takes heap snapshots at base, started and stepped and prints what grew, per
 * turn, by object kind (the snapshots themselves then skew the readings).
 * Prints a table, then one JSON line (`{"bench":"interaction-memory",...}`).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { getHeapSnapshot } from 'node:v8'
import WebSocket from 'ws'
import { startInProcess } from './lib/in-process.js'
import { AI, type AiEvent, type AiRuntime } from '../runtime/ai/index.js'
import { INTERACTIONS } from '../runtime/interactions/index.js'

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    steps: { type: 'string', default: '200' },
    store: { type: 'string', default: 'lmdb' },
    snapshot: { type: 'boolean', default: false },
    client: { type: 'boolean', default: false }
  }
})

/** One memory reading, in bytes. */
interface Reading {
  heapUsed: number
  heapTotal: number
  external: number
  arrayBuffers: number
  lmdb: number
  /** Bytes of the LMDB pages holding data: what the environment keeps, free pages left out. */
  lmdbUsed: number
  /** Bytes up to the map's high-water mark: data, free pages kept for reuse, the free list. */
  lmdbMap: number
  rss: number
}

type ToClient = { cmd: 'create'; url: string; n: number; message: string } | { cmd: 'wait'; steps: number }
type FromClient = { ok: 'created'; ids: string[] } | { ok: 'steps'; stepBytes: number } | { ok: 'ended' }

if (values.client) runClient()
else
  await main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run with node --expose-gc')
  const n = Number(values.n)
  const k = Number(values.steps)
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-interaction-memory-'))
  const { platform, url } = await startInProcess(dataDir, {
    'platform.interactions.http-write-enabled': true,
    'platform.interactions.demo-principal': 'bench',
    // one principal runs every turn: its quota would cap the turns in flight being measured
    'platform.interactions.quota.runs-in-flight': 0,
    'platform.interactions.quota.bytes-per-minute': 0,
    'platform.interactions.text-coalesce-ms': 0,
    'platform.interactions.max-steps': 5000,
    'platform.interactions.store': values.store
  })
  const service = platform.area(INTERACTIONS)
  const gates = gateDemo(platform.area(AI).runtime('demo')!, k)
  const client = fork(fileURLToPath(import.meta.url), ['--client'], { execArgv: [] })
  const settle = async (): Promise<Reading> => {
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 50))
      gc()
    }
    return reading(dataDir, platform.store.pages())
  }
  const snapshots: Map<string, Kind>[] = []
  try {
    // warm-up: lazy state (JIT, first LMDB pages, route tables) is not the turns'
    gates.gated = false
    await ask(client, { cmd: 'create', url, n: 20, message: message(k) })
    await ask(client, { cmd: 'wait', steps: -1 })
    gates.gated = true
    const base = await settle()
    if (values.snapshot) snapshots.push(await kinds())
    const { ids } = (await ask(client, { cmd: 'create', url, n, message: message(k) })) as { ids: string[] }
    await until(() => gates.atStart === n && service.feed.watched === n)
    const started = await settle()
    if (values.snapshot) snapshots.push(await kinds())
    gates.releaseStart()
    const { stepBytes } = (await ask(client, { cmd: 'wait', steps: k })) as { stepBytes: number }
    await until(() => gates.atSteps === n)
    const stepped = await settle()
    if (values.snapshot) snapshots.push(await kinds())
    gates.releaseSteps()
    await ask(client, { cmd: 'wait', steps: -1 })
    await until(() => service.inFlight === 0 && service.feed.watched === 0)
    // with platform.interactions.lmdb.pack-ended an ended run is packed shortly after its end: read after
    await service.store.idle?.()
    const ended = await settle()
    const sample = await service.store.load(ids[0]!)
    if (sample?.status !== 'COMPLETED') throw new Error(`a turn did not complete: ${sample?.status}`)
    report({ n, k, store: values.store!, stepBytes: stepBytes / n, base, started, stepped, ended })
    if (snapshots.length === 3) {
      printKinds('base -> started', snapshots[0]!, snapshots[1]!, n)
      printKinds('started -> stepped', snapshots[1]!, snapshots[2]!, n)
    }
  } finally {
    client.kill()
    await platform.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The demo runtime's turns wait before their first event, then after `k` text deltas, until released. */
function gateDemo(demo: AiRuntime, k: number) {
  const original = demo.stream.bind(demo)
  let openStart!: () => void
  let openSteps!: () => void
  const start = new Promise<void>((r) => (openStart = r))
  const steps = new Promise<void>((r) => (openSteps = r))
  const g = {
    gated: true,
    atStart: 0,
    atSteps: 0,
    releaseStart: () => openStart(),
    releaseSteps: () => openSteps()
  }
  demo.stream = async function* (request, signal): AsyncGenerator<AiEvent> {
    const gated = g.gated
    if (gated) {
      g.atStart++
      await start
    }
    let texts = 0
    for await (const e of original(request, signal)) {
      yield e
      if (gated && e.type === 'text' && ++texts === k) {
        g.atSteps++
        await steps
      }
    }
  }
  return g
}

/**
 * Bytes of memory now; `lmdb` is the resident pages of the data directory's mapped files, the
 * two others LMDB's own count of its pages.
 */
function reading(dataDir: string, pages: { pageSize: number; used: number; map: number }): Reading {
  const m = process.memoryUsage()
  let lmdb = 0
  let inLmdb = false
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inLmdb = line.includes(dataDir)
    else if (inLmdb && line.startsWith('Rss:')) lmdb += Number(/(\d+)/.exec(line)![1]) * 1024
  }
  return {
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    lmdb,
    lmdbUsed: pages.used * pages.pageSize,
    lmdbMap: pages.map * pages.pageSize,
    rss: m.rss
  }
}

function report(r: {
  n: number
  k: number
  store: string
  stepBytes: number
  base: Reading
  started: Reading
  stepped: Reading
  ended: Reading
}): void {
  const per = (x: Reading, key: keyof Reading) => (x[key] - r.base[key]) / r.n / 1024
  const keys: (keyof Reading)[] = [
    'heapUsed',
    'heapTotal',
    'external',
    'arrayBuffers',
    'lmdb',
    'lmdbUsed',
    'lmdbMap',
    'rss'
  ]
  const f = (x: number) => x.toFixed(1).padStart(9)
  console.log(`interaction memory: ${r.n} turns in flight, ${r.k} steps each, ${r.store} store; KB per turn over base`)
  console.log(`${''.padEnd(14)}${'started'.padStart(9)}${'stepped'.padStart(9)}${'ended'.padStart(9)}`)
  for (const key of keys)
    console.log(`${key.padEnd(14)}${f(per(r.started, key))}${f(per(r.stepped, key))}${f(per(r.ended, key))}`)
  // the rest of RSS: sockets and other native allocations, and what the allocator keeps after a peak
  const native = (x: Reading) => per(x, 'rss') - per(x, 'heapTotal') - per(x, 'external') - per(x, 'lmdb')
  console.log(`${'other native'.padEnd(14)}${f(native(r.started))}${f(native(r.stepped))}${f(native(r.ended))}`)
  // In flight, beyond its steps: the JS heap and external memory a turn holds while it runs, less
  // what it still holds once ended (its stored steps and record on the memory store, its
  // conversation entry). The LMDB store's steps live in the map's pages, outside the heap: they
  // are the steps at rest, reported on their own.
  const js = (x: Reading) => per(x, 'heapUsed') + per(x, 'external')
  const out = {
    bench: 'interaction-memory',
    n: r.n,
    steps: r.k,
    store: r.store,
    stepsJsonKb: r.stepBytes / 1024,
    // what the ended turn keeps: its share of the heap and of LMDB's pages holding data; the
    // pages its steps took while it ran are free once it ended, and later turns reuse them
    storeKb: js(r.ended) + per(r.ended, 'lmdbUsed'),
    lmdbBytesPerStep: (per(r.stepped, 'lmdb') * 1024) / r.k,
    lmdbMapKb: per(r.ended, 'lmdbMap'),
    lmdbResidentKb: per(r.ended, 'lmdb'),
    inFlightKb: js(r.stepped) - js(r.ended),
    inFlightNoStepsKb: js(r.started),
    rssKb: per(r.stepped, 'rss'),
    nativeKb: native(r.stepped),
    readings: { base: r.base, started: r.started, stepped: r.stepped, ended: r.ended }
  }
  console.log(`steps' own bytes (JSON of ${r.k} steps): ${f(out.stepsJsonKb)} KB`)
  console.log(
    `what an ended turn keeps (stored steps and record, conversation entry; LMDB pages holding data): ${f(out.storeKb)} KB` +
      (r.store === 'lmdb'
        ? `; LMDB map pages resident in flight ${out.lmdbBytesPerStep.toFixed(0)} B per step, map high-water ${out.lmdbMapKb.toFixed(1)} KB per turn (free pages included, reused by later turns)`
        : '')
  )
  console.log(
    `in flight, beyond its steps (heap + external, stepped minus ended): ${f(out.inFlightKb)} KB; before its first step ${f(out.inFlightNoStepsKb)} KB`
  )
  console.log(JSON.stringify(out))
}

/** Self size and count of the heap's objects by kind (node type and constructor or name). */
type Kind = { size: number; count: number }

async function kinds(): Promise<Map<string, Kind>> {
  const chunks: Buffer[] = []
  for await (const c of getHeapSnapshot()) chunks.push(c as Buffer)
  const snap = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
    nodes: number[]
    strings: string[]
  }
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0]
  const [ti, ni, si] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f))
  const out = new Map<string, Kind>()
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + ti!]!]!
    let name = type === 'string' || type === 'concatenated string' ? '' : snap.strings[snap.nodes[i + ni!]!]!
    if (name.length > 60) name = name.slice(0, 60)
    const key = `${type}:${name}`
    const k = out.get(key) ?? { size: 0, count: 0 }
    k.size += snap.nodes[i + si!]!
    k.count++
    out.set(key, k)
  }
  return out
}

function printKinds(title: string, a: Map<string, Kind>, b: Map<string, Kind>, n: number): void {
  const rows = [...b].map(([key, v]) => {
    const w = a.get(key) ?? { size: 0, count: 0 }
    return { key, size: (v.size - w.size) / n, count: (v.count - w.count) / n }
  })
  rows.sort((x, y) => y.size - x.size)
  console.log(`heap growth per turn by kind (bytes, objects), ${title}:`)
  for (const r of rows.slice(0, 30))
    console.log(`${r.size.toFixed(0).padStart(8)} ${r.count.toFixed(1).padStart(8)}  ${r.key}`)
}

async function until(cond: () => boolean, ms = 120_000): Promise<void> {
  const t0 = Date.now()
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting for the turns')
    await new Promise((r) => setTimeout(r, 20))
  }
}

function message(words: number): string {
  return Array.from({ length: words }, (_, i) => `w${i}`).join(' ')
}

function ask(child: ChildProcess, msg: ToClient): Promise<FromClient> {
  return new Promise((resolve, reject) => {
    const onExit = () => reject(new Error('the client process exited'))
    child.once('exit', onExit)
    child.once('message', (m) => {
      child.off('exit', onExit)
      resolve(m as FromClient)
    })
    child.send(msg)
  })
}

/** The client process: creates interactions (one connection each, closed after) and watches each. */
function runClient(): void {
  const watchers: { steps: number; bytes: number; ended: boolean }[] = []
  let waiting: { steps: number } | undefined
  const check = () => {
    if (waiting === undefined) return
    const done =
      waiting.steps < 0 ? watchers.every((w) => w.ended) : watchers.every((w) => w.ended || w.steps >= waiting!.steps)
    if (!done) return
    const stepBytes = watchers.reduce((s, w) => s + w.bytes, 0)
    waiting = undefined
    process.send!(watchers.every((w) => w.ended) ? { ok: 'ended' } : { ok: 'steps', stepBytes })
  }
  process.on('message', (m: ToClient) => {
    if (m.cmd === 'wait') {
      waiting = { steps: m.steps }
      check()
      return
    }
    watchers.length = 0
    void Promise.all(Array.from({ length: m.n }, () => create(m.url, m.message))).then((ids) => {
      for (const id of ids) {
        const w = { steps: 0, bytes: 0, ended: false }
        watchers.push(w)
        const ws = new WebSocket(`${m.url.replace(/^http/, 'ws')}/platform/interactions-stream?id=${id}`)
        ws.on('message', (d) => {
          const f = JSON.parse(String(d)) as { type: string; step?: unknown }
          if (f.type === 'interaction-step') {
            w.steps++
            w.bytes += JSON.stringify(f.step).length
          }
          check()
        })
        ws.on('close', () => {
          w.ended = true
          check()
        })
      }
      process.send!({ ok: 'created', ids })
    })
  })
}

function create(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/interactions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } },
      (res) => {
        let body = ''
        res.on('data', (d: Buffer) => (body += d.toString()))
        res.on('end', () => resolve((JSON.parse(body) as { id: string }).id))
      }
    )
    req.on('error', reject)
    req.end(JSON.stringify({ message: text, background: true }))
  })
}
