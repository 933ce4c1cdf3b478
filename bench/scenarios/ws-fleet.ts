import { execSync } from 'node:child_process'
import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, sleep, startPeer, startPlatform, type ServerProcess } from '../lib/proc.js'
import { WsLoad } from '../lib/ws-load.js'

// members per room: idle connections live in small rooms (a 20 000-member room would announce 2·10^8 joins)
const GROUP = 10

interface Measured {
  connections: number
  rssPerConnKb: number
  rssBeforeMb: number
  rssAfterMb: number
  connectSec: number
  /** Server CPU (user+system) while the fleet connected, per connection opened. */
  cpuPerConnUs: number
}

/** The open-files limit of this process (the server inherits it); 20 000 on the machine this was written on. */
function fdLimit(): number {
  try {
    return Number(execSync('sh -c "ulimit -n"', { encoding: 'utf8' }).trim()) || 1024
  } catch {
    return 1024
  }
}

/**
 * WebSocket fleet: many concurrent idle WebSockets (20 000 full, 5 000 quick, capped by
 * the open-files limit, which both the client and the server need one descriptor per connection
 * of) in rooms of 10, spread over four 127.0.0.x source addresses. Server RSS growth per
 * connection, ours vs the `ws` peer.
 */
const scenario: Scenario = {
  name: 'ws-fleet',
  description:
    'Concurrent idle WebSockets in rooms of 10 (20 000 full, 5 000 quick; capped by ulimit -n): server RSS per connection, platform vs ws',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const want = Number(process.env.BENCH_FLEET ?? (opts.quick ? 5000 : 20_000))
    const limit = fdLimit()
    // each process keeps a few dozen descriptors of its own (stdio, epoll, LMDB, worker pipes)
    const n = Math.min(want, limit - 80)
    const notes: string[] = []
    if (n < want)
      notes.push(
        `${n} connections, not ${want}: ulimit -n is ${limit} here (the server and the client each need a descriptor per connection; raise the hard limit to measure ${want})`
      )
    const results: Record<string, Measured | undefined> = {}
    for (const name of ['platform', 'ws']) {
      if (opts.signal.aborted) throw new Error('aborted')
      const server =
        name === 'platform'
          ? await startPlatform(opts.root, opts.tmpDir, NO_ADDRESS_CAPS)
          : await startPeer(opts.root, 'ws-fanout.js')
      try {
        results[name] = await measure(server, n, opts, notes)
      } finally {
        await server.stop()
      }
    }
    const ours = results.platform,
      peer = results.ws
    notes.push(
      'RSS per connection = (server VmRSS with the fleet connected and settled - VmRSS before) / connections; kernel socket buffers are not in it'
    )
    return {
      scenario: 'ws-fleet',
      description: this.description,
      rows: [
        row(
          'rss_per_conn_kb',
          'server RSS per idle connection',
          'KB',
          'lower',
          ours?.rssPerConnKb,
          peer === undefined ? {} : { ws: peer.rssPerConnKb }
        ),
        row(
          'connect_per_s',
          'connections opened/s',
          '/s',
          'higher',
          ours === undefined ? undefined : ours.connections / ours.connectSec,
          peer === undefined ? {} : { ws: peer.connections / peer.connectSec },
          false
        )
      ],
      notes,
      details: results
    }
  }
}

async function measure(
  server: ServerProcess,
  n: number,
  opts: RunOptions,
  notes: string[]
): Promise<Measured | undefined> {
  await sleep(1000)
  const before = server.memory().rss
  const cpu0 = server.cpuSeconds()
  const t0 = performance.now()
  const url = server.url.replace(/^http/, 'ws') + '/platform/rooms/fleet-{group}'
  const { load, ok, error } = await WsLoad.open({ url, connections: n, threads: 2, groupSize: GROUP, concurrency: 128 })
  try {
    const connectSec = (performance.now() - t0) / 1000
    const cpuPerConnUs = ((server.cpuSeconds() - cpu0) / Math.max(1, ok)) * 1e6
    if (ok < n) {
      notes.push(`${server.name}: only ${ok} of ${n} connections opened (${error ?? 'unknown'})`)
      opts.log(`  ${server.name}: ${ok}/${n} connected (${error ?? ''}), not measured`)
      if (ok < n * 0.9) return undefined
    }
    await load.settle(1000, 30_000)
    await sleep(opts.quick ? 1000 : 3000)
    const after = server.memory().rss
    const s = await load.stats(false)
    const m: Measured = {
      connections: ok,
      rssPerConnKb: (after - before) / ok / 1024,
      rssBeforeMb: before / 1048576,
      rssAfterMb: after / 1048576,
      connectSec,
      cpuPerConnUs
    }
    if (s.closed > 0) notes.push(`${server.name}: ${s.closed} connections closed by the server while idle`)
    opts.log(
      `  ${server.name.padEnd(9)}: ${ok} idle connections in ${connectSec.toFixed(1)} s, RSS ${m.rssBeforeMb.toFixed(0)} → ${m.rssAfterMb.toFixed(0)} MB = ${m.rssPerConnKb.toFixed(2)} KB/connection, ${cpuPerConnUs.toFixed(0)} µs CPU/connection opened`
    )
    return m
  } finally {
    await load.close()
  }
}

export default scenario
