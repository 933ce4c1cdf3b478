import type { ResultRow, RowUnits, ScenarioResult } from '../scenario.js'
import { httpLoad, measureHttp } from './http-load.js'
import { startPeer } from './proc.js'

/**
 * One unit of the machine: the raw uWebSockets.js server's CPU per small JSON GET, measured in
 * the same run as the figures it divides. Absolute times move with the machine (the same code
 * measured 5.4 µs per raw GET on one VM and 15.1 µs on another, and every other figure moved
 * about as much), so a figure in units says whether the code got slower; in µs it cannot.
 */
export interface MachineUnit {
  /** Server CPU µs per request of `bench/peers/uws-raw.js` under 100 keep-alive connections. */
  us: number
  /**
   * `http-json`: its `uws-raw` peer in this run; `measured`: the short measurement before the
   * first scenario; `before-scenario`: measured right before the scenario whose rows it divides.
   */
  source: 'http-json' | 'measured' | 'before-scenario'
  /** 1-minute load average when it was measured. */
  loadAverage?: number
  /** The windows behind `us` (their median), when it was measured here rather than by `http-json`. */
  samples?: number[]
}

const CONNECTIONS = 100

const WINDOWS = 3
const WINDOW_SEC = 2

/**
 * The unit measured here: the same peer and load as `http-json`'s `uws-raw` subject, short and
 * fixed (1 s warm-up, then three 2-s windows) so every measurement pays the same seconds. One
 * window moved by about a tenth between back-to-back runs on a quiet machine; the median of three
 * does not follow one unlucky window.
 */
export async function measureUnit(root: string, signal?: AbortSignal): Promise<number[]> {
  const peer = await startPeer(root, 'uws-raw.js')
  try {
    await httpLoad({ url: peer.url + '/', connections: CONNECTIONS, durationSec: 1, root, signal })
    const samples: number[] = []
    for (let i = 0; i < WINDOWS; i++) {
      const m = await measureHttp(peer, { path: '/', connections: CONNECTIONS, durationSec: WINDOW_SEC, root, signal })
      if (!(m.cpuUsPerReq > 0) || m.requests === 0) throw new Error('the raw uWebSockets.js peer served no request')
      samples.push(m.cpuUsPerReq)
    }
    return samples
  } finally {
    await peer.stop()
  }
}

/** The unit as `http-json` measured it: its `uws-raw` peer's CPU per request. */
export function unitFromHttpJson(r: ScenarioResult): number | undefined {
  if (r.scenario !== 'http-json' || r.failed !== undefined) return undefined
  const v = r.rows.find((x) => x.id === 'cpu_us_per_req')?.peers['uws-raw']
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : undefined
}

/**
 * How a row's unit converts: a time (µs, ms, s) divides by the unit; a rate (anything per
 * second) becomes operations per unit. Memory, bytes and plain ratios do not move with the CPU's
 * speed and stay as they are (undefined).
 */
export function unitKind(unit: string): { kind: 'time'; usPer: number } | { kind: 'rate' } | undefined {
  if (unit === 'µs' || unit === 'us') return { kind: 'time', usPer: 1 }
  if (unit === 'ms') return { kind: 'time', usPer: 1000 }
  if (unit === 's') return { kind: 'time', usPer: 1e6 }
  if (unit.endsWith('/s')) return { kind: 'rate' }
  return undefined
}

/** One figure of a row in units of the machine; undefined when the row's unit does not convert. */
export function toUnits(unit: string, value: number, unitUs: number): number | undefined {
  const k = unitKind(unit)
  if (k === undefined || !Number.isFinite(value)) return undefined
  return k.kind === 'time' ? (value * k.usPer) / unitUs : (value * unitUs) / 1e6
}

/** The row's figures in units, or undefined when its unit does not convert. */
export function rowUnits(x: ResultRow, unitUs: number): RowUnits | undefined {
  if (unitKind(x.unit) === undefined) return undefined
  const peers: Record<string, number> = {}
  for (const [p, v] of Object.entries(x.peers)) {
    const u = toUnits(x.unit, v, unitUs)
    if (u !== undefined) peers[p] = u
  }
  return { ours: x.ours === undefined ? undefined : toUnits(x.unit, x.ours, unitUs), peers }
}

/** Fills `units` on every row that converts. */
export function attachUnits(r: ScenarioResult, unitUs: number | undefined): void {
  if (unitUs === undefined) return
  for (const x of r.rows) {
    const u = rowUnits(x, unitUs)
    if (u !== undefined) x.units = u
  }
}

/** How a row in units reads next to its own unit: `µs` rows are `units`, rates are `/unit`. */
export function unitsLabel(unit: string): string {
  return unitKind(unit)?.kind === 'rate' ? 'per unit' : 'units'
}
