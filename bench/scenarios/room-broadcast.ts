import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, cpuSecondsOf, startPeer, startPlatform, type ServerProcess } from '../lib/proc.js'
import { WsLoad } from '../lib/ws-load.js'

const PAD = 64 // payload bytes beyond the marker: a small chat-sized JSON frame

interface Measured {
  members: number
  deliveriesPerSec: number
  p50Ms: number
  p99Ms: number
  cpuUsPerDelivery: number
  cpuCores: number
  /** CPU of the load client (the harness process, all its worker threads), 1.0 = one core */
  clientCores: number
  peakRssMb: number
  bursts: number
  timeouts: number
}

/**
 * Room broadcast fan-out: N members join `/platform/rooms/bench`; one member
 * sends bursts of JSON frames, every other member receives each one. Deliveries per second and
 * delivery latency (send → receive, same clock) on our server vs a `ws` server doing the same
 * fan-out (bench/peers/ws-fanout.js). The client is bench/lib/ws-load (worker threads, raw frames).
 * Members join silently (`presence=false`; the peer runs with FANOUT_ANNOUNCE=0): announcing N
 * joins is N²/2 frames, which is not fan-out and would dominate (or break) filling a big room.
 */
const scenario: Scenario = {
  name: 'room-broadcast',
  description:
    'Room broadcast on /platform/rooms/{room}: one member sends, every member receives (1 000 members quick, 10 000 full; silent joins); platform vs ws',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    // The full run aims at 10 000 members. With join announcements our room could not be filled that far
    // on 2 cores (N²/2 frames; members were closed as slow consumers past ~8 800) and the full run
    // used 3 000; silent members (presence=false) make filling it linear. 10 000 server sockets plus
    // 10 000 client sockets fit the 20 000-descriptor hard limit because they are in two processes
    const members = Number(process.env.BENCH_ROOM_MEMBERS ?? (opts.quick ? 1000 : 10_000))
    // 16 frames per burst at every size, so sizes compare. The burst sets our CPU per delivery
    // (uWS writes a socket's queued topic frames in one syscall; ws writes each frame), not the
    // member count: docs/bench.md has both sides at 2 frames. BENCH_ROOM_BURST overrides it
    const burst = Number(process.env.BENCH_ROOM_BURST ?? 16)
    const notes: string[] = []
    const results: Record<string, Measured | undefined> = {}
    for (const name of ['platform', 'ws']) {
      if (opts.signal.aborted) throw new Error('aborted')
      // neither side announces joins or leaves (our members join with presence=false), at every
      // size: the same work, fan-out only
      // one member sends every burst: the per-member message rate (a chat default) is lifted, as ws has none
      const server =
        name === 'platform'
          ? await startPlatform(opts.root, opts.tmpDir, [
              '--set',
              'platform.transport.rooms.max-messages-per-second=0',
              ...NO_ADDRESS_CAPS
            ])
          : await startPeer(opts.root, 'ws-fanout.js', [], { FANOUT_ANNOUNCE: '0' })
      try {
        results[name] = await measure(server, members, burst, opts, notes)
      } finally {
        await server.stop()
      }
    }
    const ours = results.platform
    const peer = results.ws
    const peers = (f: (m: Measured) => number): Record<string, number> => (peer === undefined ? {} : { ws: f(peer) })
    notes.push(
      `${members} members joined silently (presence=false; ws peer FANOUT_ANNOUNCE=0), bursts of ${burst} frames (${PAD + 30} bytes) from one member, next burst when every member got the last one; latency = receive time - send time stamped in the frame`
    )
    if (ours !== undefined && peer !== undefined)
      notes.push(
        `CPU (1 core = 100%): server platform ${(ours.cpuCores * 100).toFixed(0)}% / ws ${(peer.cpuCores * 100).toFixed(0)}%, load client ${(ours.clientCores * 100).toFixed(0)}% / ${(peer.clientCores * 100).toFixed(0)}%; a server under 100% is not the bound (the client or the other engineers' load on the box is): read CPU µs per delivery`
      )
    return {
      scenario: 'room-broadcast',
      description: this.description,
      rows: [
        row(
          'deliveries_per_s',
          'deliveries/s',
          '/s',
          'higher',
          ours?.deliveriesPerSec,
          peers((m) => m.deliveriesPerSec),
          false
        ),
        row(
          'p50_ms',
          'delivery latency p50',
          'ms',
          'lower',
          ours?.p50Ms,
          peers((m) => m.p50Ms),
          false
        ),
        row(
          'p99_ms',
          'delivery latency p99',
          'ms',
          'lower',
          ours?.p99Ms,
          peers((m) => m.p99Ms),
          false
        ),
        row(
          'cpu_us_per_delivery',
          'server CPU per delivery (ratio = deliveries per CPU-second)',
          'µs',
          'lower',
          ours?.cpuUsPerDelivery,
          peers((m) => m.cpuUsPerDelivery)
        ),
        row(
          'peak_rss_mb',
          'server peak RSS',
          'MB',
          'lower',
          ours?.peakRssMb,
          peers((m) => m.peakRssMb),
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
  members: number,
  burst: number,
  opts: RunOptions,
  notes: string[]
): Promise<Measured | undefined> {
  // the ws peer ignores the query
  const url = server.url.replace(/^http/, 'ws') + '/platform/rooms/bench?presence=false'
  const t0 = performance.now()
  const { load, ok, failed, error } = await WsLoad.open({ url, connections: members, threads: 2, concurrency: 64 })
  try {
    if (ok < members) {
      notes.push(
        `${server.name}: ${failed} of ${members} members could not join (${error ?? 'unknown'})${server.name === 'platform' ? ': is the room endpoint in this build?' : ''}`
      )
      opts.log(`  ${server.name}: ${ok}/${members} joined (${error ?? ''}), not measured`)
      return undefined
    }
    await load.settle(500, 180_000)
    opts.log(`  ${server.name}: ${members} members joined in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const run = async (sec: number) => {
      let bursts = 0,
        timeouts = 0
      const end = performance.now() + sec * 1000
      while (performance.now() < end && !opts.signal.aborted) {
        bursts++
        if (!(await load.burst(burst, PAD))) {
          timeouts++
          if (timeouts > 3) break
        }
      }
      return { bursts, timeouts }
    }
    await run(opts.warmupSec)
    await load.stats(true)
    server.resetPeak()
    const cpu0 = server.cpuSeconds()
    const client0 = cpuSecondsOf('self')
    const w0 = performance.now()
    const { bursts, timeouts } = await run(opts.durationSec)
    const wall = (performance.now() - w0) / 1000
    const cpu = server.cpuSeconds() - cpu0
    const clientCores = (cpuSecondsOf('self') - client0) / wall
    const s = await load.stats(true)
    const m: Measured = {
      members,
      deliveriesPerSec: s.deliveries / wall,
      p50Ms: s.p50Us / 1000,
      p99Ms: s.p99Us / 1000,
      cpuUsPerDelivery: s.deliveries > 0 ? (cpu * 1e6) / s.deliveries : NaN,
      cpuCores: cpu / wall,
      clientCores,
      peakRssMb: server.memory().peak / 1048576,
      bursts,
      timeouts
    }
    if (timeouts > 0)
      notes.push(
        `${server.name}: ${timeouts} burst(s) not fully delivered within 10 s (dropped frames or closed slow consumers; ${s.closed} connections closed)`
      )
    opts.log(
      `  ${server.name.padEnd(9)}: ${Math.round(m.deliveriesPerSec)} deliveries/s, p50 ${m.p50Ms.toFixed(2)} ms, p99 ${m.p99Ms.toFixed(2)} ms, ${m.cpuUsPerDelivery.toFixed(3)} CPU µs/delivery (server ${(m.cpuCores * 100).toFixed(0)}% CPU, client ${(m.clientCores * 100).toFixed(0)}%), ${bursts} bursts`
    )
    return m
  } finally {
    await load.close()
  }
}

export default scenario
