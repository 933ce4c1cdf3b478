import WebSocket from 'ws'
import type { RunOptions } from '../scenario.js'
import { sleep, startPlatform, type ServerProcess } from './proc.js'
import { WsLoad } from './ws-load.js'
import { ChurnLoad } from './churn-load.js'
import { EventSubscribers } from './event-subscribers.js'

const PAD = 64
const BURST = 16
/** Rooms the churn thread joins and leaves; each keeps one resident member (see `residents`). */
const CHURN_ROOMS = 50

export interface ChurnFanOutOptions {
  /** Silent members of the fan-out room (a burst reaches all but the sender). */
  members: number
  /** Joins+leaves per second offered by the churn thread. */
  churn: number
  /** Deliveries per second the bursts are paced to (0: bursts back to back). */
  deliveries: number
  subscribers: number
  /** Alternating measured windows per subject (the measured time is split between them). */
  rounds: number
  /** Server flags of both subjects. */
  base: string[]
}

/** One subject's totals over its measured windows. */
export interface FanOut {
  deliveriesPerSec: number
  cpuUsPerDelivery: number
  churnPerSec: number
  /** Joins that failed or were refused while measured. */
  lostJoins: number
  eventsPerSubscriberPerSec: number
  /** Subscribers the server closed (slow consumers) by the end. */
  subscribersClosed: number
  cpuCores: number
}

interface Subject {
  name: 'off' | 'on'
  server: ServerProcess
  residents: WebSocket[]
  load: WsLoad
  subs: EventSubscribers | undefined
  cpu: number
  wall: number
  /** Seconds from each window's start until its last join was answered. */
  churnWall: number
  deliveries: number
  joined: number
  lost: number
  events: number
}

async function subject(
  name: 'off' | 'on',
  o: ChurnFanOutOptions,
  opts: RunOptions,
  started: ServerProcess[]
): Promise<Subject> {
  const server = await startPlatform(opts.root, opts.tmpDir, [
    ...o.base,
    ...(name === 'off' ? ['--set', 'platform.admin.enabled=false'] : [])
  ])
  started.push(server)
  const url = server.url.replace(/^http/, 'ws') + '/platform/rooms/bench?presence=false'
  const { load, ok, error } = await WsLoad.open({ url, connections: o.members, threads: 1, concurrency: 64 })
  if (ok < o.members) {
    await load.close()
    throw new Error(`${name}: ${ok}/${o.members} members joined (${error ?? ''})`)
  }
  const subs =
    name === 'on' ? await EventSubscribers.open(server.url + '/platform/admin/events', o.subscribers) : undefined
  await load.settle(500, 60_000)
  return {
    name,
    server,
    residents: await residents(server),
    load,
    subs,
    cpu: 0,
    wall: 0,
    churnWall: 0,
    deliveries: 0,
    joined: 0,
    lost: 0,
    events: 0
  }
}

/**
 * One member that stays in each churn room, so the churn is members joining and leaving live rooms
 * (one ResourceConnected or ResourceDisconnected each), not rooms created and destroyed with every
 * member (which adds a BroadcasterCreated and a BroadcasterDestroyed per join and leave).
 */
function residents(server: ServerProcess): Promise<WebSocket[]> {
  const base = server.url.replace(/^http/, 'ws')
  return Promise.all(
    Array.from(
      { length: CHURN_ROOMS },
      (_, i) =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(`${base}/platform/rooms/churn-${i}?presence=false`)
          ws.once('open', () => resolve(ws))
          ws.once('error', reject)
        })
    )
  )
}

/** `count` bursts from the room's sender, paced to `deliveries`/s when set. */
async function bursts(s: Subject, o: ChurnFanOutOptions, count: number, signal: AbortSignal): Promise<void> {
  const gapMs = o.deliveries > 0 ? (BURST * (o.members - 1) * 1000) / o.deliveries : 0
  const start = performance.now()
  for (let k = 1; k <= count && !signal.aborted; k++) {
    await s.load.burst(BURST, PAD)
    const wait = start + k * gapMs - performance.now()
    if (wait > 0) await sleep(wait)
  }
}

/**
 * One window on one subject: a fixed amount of work, the same for both subjects (the joins and
 * bursts `sec` seconds hold at the offered rates), after a warm-up at the same rates. The server's
 * CPU for that work is what counts: a machine too busy to keep the rates stretches the window but
 * leaves the work, and so the comparison, the same.
 */
async function window(s: Subject, o: ChurnFanOutOptions, warmSec: number, sec: number, opts: RunOptions) {
  const churnOf = (t: number) =>
    new ChurnLoad({
      url: s.server.url + '/platform/rooms/churn-{room}?presence=false',
      rooms: CHURN_ROOMS,
      rate: o.churn,
      total: Math.max(1, Math.round((o.churn * t) / 2))
    })
  const burstsOf = (t: number) =>
    o.deliveries > 0 ? Math.max(1, Math.round((o.deliveries * t) / (BURST * (o.members - 1)))) : Math.round(t * 100)
  const warm = churnOf(warmSec)
  await bursts(s, o, burstsOf(warmSec), opts.signal)
  await warm.stop()
  const total = Math.max(1, Math.round((o.churn * sec) / 2))
  await s.load.stats(true)
  const e0 = (await s.subs?.stats())?.events ?? 0
  const cpu0 = s.server.cpuSeconds()
  const w0 = performance.now()
  const churn = churnOf(sec)
  try {
    await bursts(s, o, burstsOf(sec), opts.signal)
    const c = await churn.finished(total)
    s.churnWall += (performance.now() - w0) / 1000
    // the last leaves and the stream's last batch
    await sleep(100)
    s.wall += (performance.now() - w0) / 1000
    s.cpu += s.server.cpuSeconds() - cpu0
    s.deliveries += (await s.load.stats(true)).deliveries
    s.events += ((await s.subs?.stats())?.events ?? 0) - e0
    s.joined += c.joined
    s.lost += c.refused + c.failed
  } finally {
    await churn.stop()
  }
}

/**
 * Room fan-out CPU per delivery while rooms churn, admin plane off (`platform.admin.enabled=false`)
 * and on with `subscribers` admin-stream subscribers. Both servers run side by side and are measured
 * in alternating windows (off, on, on, off, ...), so a neighbour's load on a shared machine falls
 * on both alike; each subject's figure is its total CPU over its total deliveries.
 */
export async function churnFanOut(o: ChurnFanOutOptions, opts: RunOptions): Promise<Record<'off' | 'on', FanOut>> {
  const started: ServerProcess[] = []
  const subjects: Subject[] = []
  try {
    for (const name of ['off', 'on'] as const) subjects.push(await subject(name, o, opts, started))
    const sec = opts.durationSec / o.rounds
    const warm = Math.max(1, opts.warmupSec / o.rounds)
    for (let r = 0; r < o.rounds; r++) {
      const order = r % 2 === 0 ? subjects : [...subjects].reverse()
      for (const s of order) {
        if (opts.signal.aborted) throw new Error('aborted')
        await window(s, o, warm, sec, opts)
      }
    }
    const out = {} as Record<'off' | 'on', FanOut>
    for (const s of subjects) {
      const closed = (await s.subs?.stats())?.closed ?? 0
      out[s.name] = {
        deliveriesPerSec: s.deliveries / s.wall,
        cpuUsPerDelivery: (s.cpu * 1e6) / s.deliveries,
        churnPerSec: (s.joined * 2) / s.churnWall,
        lostJoins: s.lost,
        eventsPerSubscriberPerSec: s.subs === undefined ? 0 : s.events / o.subscribers / s.wall,
        subscribersClosed: closed,
        cpuCores: s.cpu / s.wall
      }
      const m = out[s.name]
      opts.log(
        `  stream ${s.name === 'on' ? 'on ' : 'off'}: ${Math.round(m.deliveriesPerSec)} deliveries/s, ${m.cpuUsPerDelivery.toFixed(3)} CPU µs/delivery, churn ${Math.round(m.churnPerSec)} joins+leaves/s${m.lostJoins > 0 ? ` (${m.lostJoins} joins failed)` : ''}, ${Math.round(m.eventsPerSubscriberPerSec)} events/s per subscriber${closed > 0 ? ` (${closed} subscribers closed)` : ''}, server ${(m.cpuCores * 100).toFixed(0)}%`
      )
    }
    return out
  } finally {
    for (const s of subjects) {
      await s.subs?.close()
      await s.load.close()
      for (const ws of s.residents) ws.terminate()
    }
    for (const server of started) await server.stop()
  }
}

export const CHURN_FANOUT_BURST = BURST
