import { execSync } from 'node:child_process'
import { connect } from 'node:net'
import WebSocket from 'ws'
import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { sleep, startPlatform, type ServerProcess } from '../lib/proc.js'
import { WsLoad } from '../lib/ws-load.js'
import { measureHttp } from '../lib/http-load.js'

const PAD = 64
const SUBSCRIBERS = 50
const BURST = 16

interface FanOut {
  deliveriesPerSec: number
  cpuUsPerDelivery: number
  churnPerSec: number
  eventsPerSubscriberPerSec: number
  cpuCores: number
}

/**
 * Rooms churn: members join and leave rooms churn-0..49, paced toward `rate` joins+leaves per
 * second. Each member is a raw socket that sends the WebSocket upgrade, waits for the 101 (the
 * server has registered it by then) and drops the connection: a join and a leave for the server,
 * at a fraction of a WebSocket client library's cost, so the harness can churn faster.
 */
function churn(port: number, rate: number, parallel: number): { stop: () => Promise<number> } {
  let running = true
  let done = 0
  let budget = 0
  const tick = setInterval(() => {
    budget = Math.min(budget + rate / 100, rate / 10)
  }, 10)
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1')
      let got = ''
      socket.setNoDelay(true)
      socket.on('connect', () => {
        socket.write(
          `GET /platform/rooms/churn-${i % 50}?presence=false HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n` +
            'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
        )
      })
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1')
        if (!got.includes('\r\n\r\n')) return
        if (got.startsWith('HTTP/1.1 101')) done += 2
        socket.destroy()
      })
      socket.on('close', () => resolve())
      socket.on('error', () => resolve())
    })
  const loops = Array.from({ length: parallel }, async (_, k) => {
    let i = k
    while (running) {
      if (budget < 2) {
        await sleep(5)
        continue
      }
      budget -= 2
      await one(i)
      i += parallel
    }
  })
  return {
    stop: async () => {
      running = false
      clearInterval(tick)
      await Promise.all(loops)
      return done
    }
  }
}

/** 50 subscribers of the admin stream counting the events they get (frames are not parsed: that is client CPU). */
async function subscribe(url: string): Promise<{ events: () => number; close: () => void }> {
  let events = 0
  const sockets: WebSocket[] = []
  await Promise.all(
    Array.from(
      { length: SUBSCRIBERS },
      () =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(url.replace(/^http/, 'ws') + '/platform/admin/events')
          sockets.push(ws)
          ws.on('message', (data) => {
            // a frame holds one event object, or an array of the events of one turn
            const s = String(data)
            if (s.startsWith('[')) events += s.split('{"type":').length - 1
            else events++
          })
          ws.once('open', () => resolve())
          ws.once('error', reject)
        })
    )
  )
  return {
    events: () => events,
    close: () => {
      for (const ws of sockets) ws.close()
    }
  }
}

async function fanOut(
  server: ServerProcess,
  members: number,
  rate: number,
  withStream: boolean,
  opts: RunOptions
): Promise<FanOut | undefined> {
  const url = server.url.replace(/^http/, 'ws') + '/platform/rooms/bench?presence=false'
  const { load, ok, error } = await WsLoad.open({ url, connections: members, threads: 1, concurrency: 64 })
  const subs = withStream ? await subscribe(server.url) : undefined
  try {
    if (ok < members) {
      opts.log(`  ${ok}/${members} joined (${error ?? ''}), not measured`)
      return undefined
    }
    await load.settle(500, 60_000)
    const churner = churn(server.port, rate, 64)
    const run = async (sec: number) => {
      const end = performance.now() + sec * 1000
      while (performance.now() < end && !opts.signal.aborted) await load.burst(BURST, PAD)
    }
    await run(opts.warmupSec)
    await load.stats(true)
    const e0 = subs?.events() ?? 0
    const cpu0 = server.cpuSeconds()
    const w0 = performance.now()
    await run(opts.durationSec)
    const wall = (performance.now() - w0) / 1000
    const cpu = server.cpuSeconds() - cpu0
    const s = await load.stats(true)
    const churned = await churner.stop()
    const m: FanOut = {
      deliveriesPerSec: s.deliveries / wall,
      cpuUsPerDelivery: (cpu * 1e6) / s.deliveries,
      // counted over warm-up and measurement alike (same pacing throughout)
      churnPerSec: churned / (wall + opts.warmupSec),
      eventsPerSubscriberPerSec: subs === undefined ? 0 : (subs.events() - e0) / SUBSCRIBERS / wall,
      cpuCores: cpu / wall
    }
    opts.log(
      `  stream ${withStream ? 'on ' : 'off'}: ${Math.round(m.deliveriesPerSec)} deliveries/s, ${m.cpuUsPerDelivery.toFixed(3)} CPU µs/delivery, churn ${Math.round(m.churnPerSec)} joins+leaves/s, ${Math.round(m.eventsPerSubscriberPerSec)} events/s per subscriber, server ${(m.cpuCores * 100).toFixed(0)}%`
    )
    return m
  } finally {
    subs?.close()
    await load.close()
  }
}

function fdLimit(): number {
  try {
    return Number(execSync('sh -c "ulimit -n"', { encoding: 'utf8' }).trim()) || 1024
  } catch {
    return 1024
  }
}

/**
 * The admin plane's cost on the data path. (1) Room fan-out CPU per delivery while rooms churn
 * joins and leaves, with the admin event stream on (50 subscribers) and off
 * (`platform.admin.enabled=false`: no listener, producers skip building events). (2) CPU per
 * `GET /api/admin/overview` with many connected resources next to `GET /healthz`: the overview
 * reads kept counts, so the number of resources must not show.
 */
const scenario: Scenario = {
  name: 'admin-events',
  description:
    'Admin plane on the data path: room fan-out CPU per delivery with 50 admin-event subscribers during join/leave churn vs the admin plane off; /api/admin/overview vs /healthz CPU per request with 20 000 connected resources (5 000 quick)',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const members = Number(process.env.BENCH_ADMIN_MEMBERS ?? (opts.quick ? 300 : 1000))
    const rate = Number(process.env.BENCH_ADMIN_CHURN ?? 10_000)
    const notes: string[] = []
    const base = [
      '--set',
      'platform.transport.rooms.max-messages-per-second=0',
      '--set',
      'platform.admin.content-read-auth-required=false'
    ]
    const fan: Record<string, FanOut | undefined> = {}
    for (const mode of ['off', 'on'] as const) {
      if (opts.signal.aborted) throw new Error('aborted')
      const server = await startPlatform(opts.root, opts.tmpDir, [
        ...base,
        ...(mode === 'off' ? ['--set', 'platform.admin.enabled=false'] : [])
      ])
      try {
        fan[mode] = await fanOut(server, members, rate, mode === 'on', opts)
      } finally {
        await server.stop()
      }
    }

    // (2) overview with many resources: idle members in rooms of 10
    const want = Number(process.env.BENCH_ADMIN_RESOURCES ?? (opts.quick ? 5000 : 20_000))
    const n = Math.min(want, fdLimit() - 200)
    if (n < want) notes.push(`${n} resources, not ${want}: ulimit -n is ${fdLimit()} here`)
    const http: Record<string, number> = {}
    const server = await startPlatform(opts.root, opts.tmpDir, base)
    try {
      const url = server.url.replace(/^http/, 'ws') + '/platform/rooms/idle-{group}?presence=false'
      const { load, ok } = await WsLoad.open({ url, connections: n, threads: 2, groupSize: 10, concurrency: 128 })
      try {
        await load.settle(1000, 60_000)
        const overview = await (await fetch(server.url + '/api/admin/overview')).json()
        notes.push(`overview with ${ok} members connected: ${JSON.stringify(overview)}`)
        for (const path of ['/healthz', '/api/admin/overview']) {
          await measureHttp(server, { path, connections: 32, durationSec: opts.warmupSec, root: opts.root })
          const m = await measureHttp(server, { path, connections: 32, durationSec: opts.durationSec, root: opts.root })
          http[path] = m.cpuUsPerReq
          opts.log(
            `  ${path.padEnd(20)}: ${Math.round(m.rps)} req/s, ${m.cpuUsPerReq.toFixed(2)} CPU µs/request (${ok} resources)`
          )
        }
      } finally {
        await load.close()
      }
    } finally {
      await server.stop()
    }

    const on = fan.on
    const off = fan.off
    notes.push(
      `fan-out: ${members} silent members of one room, bursts of ${BURST} frames from one member; churn paced toward ${rate} joins+leaves/s (64 parallel raw sockets: WebSocket upgrade to churn-0..49, dropped on the 101); stream on = ${SUBSCRIBERS} WebSocket subscribers of /platform/admin/events, off = platform.admin.enabled=false`
    )
    if (on !== undefined && off !== undefined)
      notes.push(
        `churn reached ${Math.round(off.churnPerSec)} (off) / ${Math.round(on.churnPerSec)} (on) joins+leaves/s; each subscriber got ${Math.round(on.eventsPerSubscriberPerSec)} events/s; server CPU ${(off.cpuCores * 100).toFixed(0)}% / ${(on.cpuCores * 100).toFixed(0)}%`
      )
    const rows: ResultRow[] = [
      row(
        'fanout.cpu_us_per_delivery',
        'room fan-out CPU per delivery, admin stream on (ratio vs off: ≥ 0.9 = within 10%)',
        'µs',
        'lower',
        on?.cpuUsPerDelivery,
        off === undefined ? {} : { 'stream-off': off.cpuUsPerDelivery }
      ),
      row(
        'churn_per_s',
        'joins+leaves/s reached with the stream on',
        '/s',
        'higher',
        on?.churnPerSec,
        off === undefined ? {} : { 'stream-off': off.churnPerSec },
        false
      ),
      row(
        'overview.cpu_us_per_req',
        `GET /api/admin/overview CPU per request with ${n} resources (ratio vs /healthz: ≥ 0.5 = within 2x)`,
        'µs',
        'lower',
        http['/api/admin/overview'],
        http['/healthz'] === undefined ? {} : { healthz: http['/healthz'] }
      )
    ]
    return { scenario: 'admin-events', description: this.description, rows, notes, details: { fan, http } }
  }
}

export default scenario
