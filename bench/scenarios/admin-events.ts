import { execSync } from 'node:child_process'
import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { NO_ADDRESS_CAPS, startPlatform } from '../lib/proc.js'
import { WsLoad } from '../lib/ws-load.js'
import { CHURN_FANOUT_BURST, churnFanOut, type FanOut } from '../lib/churn-fanout.js'
import { measureHttp } from '../lib/http-load.js'

const SUBSCRIBERS = 50

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
    const churn = Number(process.env.BENCH_ADMIN_CHURN ?? 10_000)
    const deliveries = Number(process.env.BENCH_ADMIN_DELIVERIES ?? 200_000)
    const rounds = Number(process.env.BENCH_ADMIN_ROUNDS ?? (opts.quick ? 2 : 4))
    const notes: string[] = []
    const base = [
      '--set',
      'platform.transport.rooms.max-messages-per-second=0',
      '--set',
      'platform.admin.content-read-auth-required=false',
      ...NO_ADDRESS_CAPS
    ]
    let fan: Partial<Record<'off' | 'on', FanOut>> = {}
    try {
      fan = await churnFanOut({ members, churn, deliveries, subscribers: SUBSCRIBERS, rounds, base }, opts)
    } catch (err) {
      if (opts.signal.aborted) throw err
      notes.push(`fan-out not measured: ${(err as Error).message}`)
      opts.log(`  fan-out not measured: ${(err as Error).message}`)
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
      `fan-out: ${members} silent members of one room, bursts of ${CHURN_FANOUT_BURST} frames from one member paced to ${deliveries > 0 ? `${deliveries} deliveries/s` : 'back to back'}; churn offered at ${churn} joins+leaves/s from its own thread (open loop, raw sockets: WebSocket upgrade to churn-0..49, reset on the 101); stream on = ${SUBSCRIBERS} raw WebSocket subscribers of /platform/admin/events in their own thread, off = platform.admin.enabled=false; both servers side by side, measured in ${rounds} alternating windows each`
    )
    if (on !== undefined && off !== undefined) {
      notes.push(
        `churn reached ${Math.round(off.churnPerSec)} (off) / ${Math.round(on.churnPerSec)} (on) joins+leaves/s; each subscriber got ${Math.round(on.eventsPerSubscriberPerSec)} events/s; server CPU ${(off.cpuCores * 100).toFixed(0)}% / ${(on.cpuCores * 100).toFixed(0)}%`
      )
      // the work is the same by construction; joins that failed make it differ
      if (on.lostJoins + off.lostJoins > 0)
        notes.push(`joins failed: ${off.lostJoins} (off) / ${on.lostJoins} (on): the subjects did not do the same work`)
      if (on.subscribersClosed > 0)
        notes.push(`${on.subscribersClosed} subscribers were closed as slow consumers: events/s undercounted`)
    }
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
