/**
 * The contract every benchmark scenario implements. A scenario starts what it needs (servers as
 * child processes on loopback, in-process objects), warms up, measures, stops everything, and
 * returns rows: one figure of ours, the same figure of each peer measured in the same run, and
 * the ratio. The runner (bench/run.ts) checks the rows against bench/targets.json and writes the
 * report; a scenario never decides pass/fail itself and never compares with earlier runs.
 *
 * Write a scenario as `bench/scenarios/<name>.ts` exporting `default` (a `Scenario`), then add it
 * to `bench/scenarios/index.ts`. Use `row()` to build rows so ratios are computed one way.
 */

import type { MachineUnit } from './lib/machine-unit.js'

export interface RunOptions {
  /** The short suite (`--quick`, whole suite under 3 min on 2 cores): shorter runs, smaller counts. */
  quick: boolean
  /** Seconds of measured load per subject (already shortened for quick runs). */
  durationSec: number
  /** Seconds of warm-up load per subject before measuring. */
  warmupSec: number
  /** A fresh temporary directory for this scenario (data dirs, scripts); removed afterwards. */
  tmpDir: string
  /** The repository root (where package.json is); servers start from here. */
  root: string
  /** Progress lines for the console (never parsed). */
  log: (msg: string) => void
  /** Aborted on SIGINT: stop load, return what you have or throw. */
  signal: AbortSignal
  /**
   * `--rounds N`: alternating rounds per subject (the figure is the median round); undefined
   * leaves each scenario its own default. See bench/lib/rounds.ts.
   */
  rounds?: number
}

export type Better = 'higher' | 'lower'

/** One measured figure: ours next to each peer's, with the ratio (> 1 means we are better). */
export interface ResultRow {
  /** Stable id targets and the baseline refer to, e.g. `rps`, `inline.rps`, `p99_ms`. */
  id: string
  /** What the figure is, for the report (`requests/s`, `p99 latency`). */
  label: string
  unit: string
  better: Better
  /** Our figure (undefined when ours could not be measured, e.g. a feature not merged yet). */
  ours: number | undefined
  /** Each peer's figure by peer name (`uws-raw`, `node-http`, `ws`, `mcp-sdk-v1`). */
  peers: Record<string, number>
  /** ours/peer when higher is better, peer/ours when lower is better: > 1 always means we win. */
  ratios: Record<string, number>
  /**
   * false: reported, but `npm run bench:check` does not gate on it (figures too noisy on a shared
   * 2-core box to fail a build on: wall-clock throughput when neighbours steal CPU, tail latency
   * under saturation, RSS peaks). The CPU-per-operation rows carry the same comparison normalised.
   */
  gate?: boolean
  /**
   * The figures in units of the machine (bench/lib/machine-unit.ts), filled by the runner for
   * rows of time (µs, ms) and rates (per second); absent when the unit was not measured.
   */
  units?: RowUnits
}

/** A row's figures in units of the machine: times in units, rates in operations per unit. */
export interface RowUnits {
  ours: number | undefined
  peers: Record<string, number>
}

/** A target from bench/targets.json evaluated against one row. */
export interface CheckResult {
  scenario: string
  row: string
  /** `ratio vs <peer> >= x`, `<= x units (…)`, `>= x per unit (…)`, `<= x <unit>` or `>= x <unit>` */
  target: string
  actual: number | undefined
  pass: boolean
  /** `actual` is our figure in units of the machine (see bench/lib/machine-unit.ts). */
  inUnits?: boolean
}

export interface ScenarioResult {
  scenario: string
  description: string
  rows: ResultRow[]
  /** Filled by the runner from bench/targets.json. */
  checks?: CheckResult[]
  /** How the figures were produced: load tool and command line, connection counts, caveats. */
  notes: string[]
  /** Anything else worth keeping in the raw JSON (per-subject CPU%, RSS, tool output). */
  details?: Record<string, unknown>
  /** Set when the scenario could not run (missing dependency, feature not built): reported, not a crash. */
  skipped?: string
  /**
   * Set by the runner when the scenario threw or raised an uncaught error while it ran (an
   * unhandled `error` event, a rejected promise nobody awaited): its error, first line. The
   * other scenarios still run.
   */
  failed?: string
  /** Alternating rounds behind the figures: how many, and the 1-minute load average at each. */
  rounds?: RoundsInfo
  /**
   * The unit this scenario's rows are stated in when it was measured right before the scenario
   * (scenarios with targets in units); absent: the run's unit.
   */
  unit?: MachineUnit
  /**
   * Set by the runner when the scenario missed a target and was run once more: which run's
   * figures these are, and the targets each run missed with its figure.
   */
  remeasured?: {
    kept: 'first' | 'second'
    first: Miss[]
    second: Miss[]
    /** The second run threw (its error, first line): the first is reported. */
    secondFailed?: string
  }
}

/** A target a run missed, with the figure it read. */
export type Miss = Pick<CheckResult, 'row' | 'target' | 'actual'>

export interface RoundsInfo {
  count: number
  /** `os.loadavg()[0]` when each round started: above the core count, other work shared the CPUs. */
  loadAverages: number[]
}

export interface Scenario {
  name: string
  description: string
  run(opts: RunOptions): Promise<ScenarioResult>
}

/** Builds a row and its ratios. Peers whose value is not a positive number get no ratio. */
export function row(
  id: string,
  label: string,
  unit: string,
  better: Better,
  ours: number | undefined,
  peers: Record<string, number>,
  gate = true
): ResultRow {
  const ratios: Record<string, number> = {}
  if (ours !== undefined && Number.isFinite(ours) && ours > 0) {
    for (const [name, v] of Object.entries(peers)) {
      if (!Number.isFinite(v) || v <= 0) continue
      ratios[name] = better === 'higher' ? ours / v : v / ours
    }
  }
  return gate
    ? { id, label, unit, better, ours, peers, ratios }
    : { id, label, unit, better, ours, peers, ratios, gate }
}
