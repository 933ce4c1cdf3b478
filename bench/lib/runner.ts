import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CheckResult, Miss, RunOptions, Scenario, ScenarioResult } from '../scenario.js'
import { attachUnits, unitFromHttpJson, unitsLabel, type MachineUnit } from './machine-unit.js'
import { fmt } from './report.js'
import { median } from './stats.js'
import { checkTargets, type Target } from './targets.js'

/**
 * Catches what a scenario lets escape: an `error` event nobody listens to (a pg pool's idle
 * client when its server stops), a rejected promise nobody awaits. Without it one such error
 * ends the process and every scenario after it is lost. While a scenario runs, the error fails
 * that scenario; between scenarios it is kept as a stray error for the report.
 */
export class FailureTrap {
  private current: ((err: Error) => void) | undefined
  readonly stray: string[] = []
  private readonly onError = (err: unknown): void => {
    const e = err instanceof Error ? err : new Error(String(err))
    if (this.current !== undefined) this.current(e)
    else {
      this.stray.push(firstLine(e))
      console.error(`bench: an error outside any scenario: ${e.stack ?? e.message}`)
    }
  }

  install(): void {
    process.on('uncaughtException', this.onError)
    process.on('unhandledRejection', this.onError)
  }

  uninstall(): void {
    process.off('uncaughtException', this.onError)
    process.off('unhandledRejection', this.onError)
  }

  /** `run()`'s outcome, or the first uncaught error raised while it runs, whichever comes first. */
  async during<T>(run: () => Promise<T>): Promise<T> {
    if (this.current !== undefined) throw new Error('FailureTrap: one scenario at a time')
    let fail!: (err: Error) => void
    const failed = new Promise<never>((_, reject) => (fail = reject))
    this.current = fail
    try {
      return await Promise.race([run(), failed])
    } finally {
      this.current = undefined
    }
  }
}

const firstLine = (e: Error) => (e.message || String(e)).split('\n')[0]!

export interface SuiteOptions extends Omit<RunOptions, 'tmpDir'> {
  targets: readonly Target[]
  trap: FailureTrap
  /** Called after a scenario failed: stop what it started and could not stop itself. */
  afterFailure?: () => void
  /** False: a scenario that missed a target is not run again (`--once`). */
  remeasure?: boolean
}

/**
 * Runs one scenario in a fresh temporary directory and never throws: a scenario that throws, or
 * raises an uncaught error while it runs, comes back `failed` with its error. Rows get their
 * figures in units of the machine and the targets are checked.
 */
export async function runOne(s: Scenario, o: SuiteOptions, unitUs: number | undefined): Promise<ScenarioResult> {
  const tmpDir = mkdtempSync(join(tmpdir(), `bench-${s.name}-`))
  const { targets, trap, afterFailure, ...base } = o
  const opts: RunOptions = { ...base, tmpDir }
  o.log(`\n== ${s.name}: ${s.description}`)
  const t0 = performance.now()
  let r: ScenarioResult
  try {
    r = await trap.during(() => s.run(opts))
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err))
    console.error(`  ${s.name} failed: ${e.stack ?? e.message}`)
    afterFailure?.()
    r = { scenario: s.name, description: s.description, rows: [], notes: [], failed: firstLine(e) }
  } finally {
    rmSync(tmpDir, { recursive: true, force: true })
  }
  attachUnits(r, unitUs ?? unitFromHttpJson(r))
  r.checks = checkTargets(r, targets, unitUs ?? unitFromHttpJson(r))
  for (const x of r.rows) {
    const u = x.units?.ours === undefined ? '' : ` = ${fmt(x.units.ours)} ${unitsLabel(x.unit)}`
    o.log(
      `  ${x.label.padEnd(28)} ours ${fmt(x.ours).padStart(10)} ${x.unit.padEnd(8)}${u} ${Object.entries(x.ratios)
        .map(([p, v]) => `${v.toFixed(2)}x vs ${p}`)
        .join(', ')}`
    )
  }
  for (const c of r.checks)
    o.log(
      `  ${c.pass ? 'PASS' : 'FAIL'} ${c.row} ${c.target} (${c.actual === undefined ? 'not measured' : c.target.startsWith('ratio') ? `${c.actual.toFixed(2)}x` : fmt(c.actual)})`
    )
  if (r.failed !== undefined) o.log(`  FAILED: ${r.failed}`)
  o.log(`  (${((performance.now() - t0) / 1000).toFixed(0)} s)`)
  return r
}

/** Whether any target of `scenario` is in units of the machine. */
export function hasUnitTargets(scenario: string, targets: readonly Target[]): boolean {
  return targets.some((t) => t.scenario === scenario && (t.maxUnits !== undefined || t.minUnits !== undefined))
}

/**
 * Runs the scenarios in order, each to its end whatever the others did. The run's unit of the
 * machine comes from `http-json` when it runs (first: the suite's order puts it there), else from
 * `measureUnit` before the first scenario. A scenario with targets in units gets its own unit,
 * measured right before it: the raw server's CPU per request drifted by a quarter within half an
 * hour on one quiet machine while the figures in µs held, and a unit taken minutes away moved the
 * verdicts more than the code did. A scenario that misses a target runs once more, and the run with
 * fewer misses is reported (`confirmed`): on a shared VM a slow spell of the host doubled a
 * JavaScript-heavy figure for a minute or two while the unit, mostly system calls, moved a quarter,
 * and a regression of the code misses in both runs.
 */
export async function runSuite(
  scenarios: readonly Scenario[],
  o: SuiteOptions & { measureUnit?: () => Promise<number[]> }
): Promise<{ results: ScenarioResult[]; unit?: MachineUnit; unitError?: string }> {
  const results: ScenarioResult[] = []
  let unit: MachineUnit | undefined
  let unitError: string | undefined
  // a unit measured since the last scenario ran (reused rather than measured twice in a row)
  let fresh: MachineUnit | undefined
  const measure = async (source: MachineUnit['source']): Promise<MachineUnit | undefined> => {
    if (o.measureUnit === undefined) return undefined
    o.log(
      `\n== unit of the machine${source === 'before-scenario' ? ' for the next scenario' : ''}: raw uWebSockets.js CPU per JSON GET (1 s warm-up, median of three 2-s windows)`
    )
    try {
      const samples = await o.trap.during(o.measureUnit)
      const us = median(samples, (x) => x)
      const u: MachineUnit = { us, source, loadAverage: Number(loadavg()[0]!.toFixed(2)), samples }
      o.log(`  1 unit = ${fmt(u.us)} µs (windows: ${samples.map((x) => fmt(x)).join(', ')})`)
      return (fresh = u)
    } catch (err) {
      unitError = firstLine(err instanceof Error ? err : new Error(String(err)))
      o.log(`  the unit could not be measured: ${unitError} (targets in units fail as not measured)`)
      o.afterFailure?.()
      return undefined
    }
  }
  if (!scenarios.some((s) => s.name === 'http-json')) unit = await measure('measured')
  /** One run of `s`, with its own unit when it has targets in units; undefined once aborted. */
  const measured = async (s: Scenario): Promise<ScenarioResult | undefined> => {
    let own: MachineUnit | undefined
    if (hasUnitTargets(s.name, o.targets)) {
      own = fresh !== undefined ? { ...fresh, source: 'before-scenario' } : await measure('before-scenario')
      if (o.signal.aborted) return undefined
    }
    fresh = undefined
    const r = await runOne(s, o, (own ?? unit)?.us)
    if (o.signal.aborted) return undefined
    if (own !== undefined) r.unit = own
    return r
  }
  for (const s of scenarios) {
    let r = o.signal.aborted ? undefined : await measured(s)
    if (r === undefined) break
    const missed = misses(r)
    // a scenario that threw or was skipped reads the same again: only a measured miss is retried
    if (o.remeasure !== false && missed.length > 0 && r.failed === undefined && r.skipped === undefined) {
      o.log(
        `\n  ${s.name}: ${missed.length} target(s) missed (${missed.map((c) => c.row).join(', ')}); measuring it once more, since a miss must reproduce`
      )
      const again = await measured(s)
      if (again === undefined) break
      r = confirmed(r, again)
      o.log(`  ${s.name}: the ${r.remeasured!.kept} run's figures are reported`)
    }
    results.push(r)
    if (s.name === 'http-json' && unit === undefined) {
      const us = unitFromHttpJson(r)
      if (us !== undefined) unit = { us, source: 'http-json', loadAverage: Number(loadavg()[0]!.toFixed(2)) }
      else unit = await measure('measured')
    }
  }
  return { results, ...(unit ? { unit } : {}), ...(unitError ? { unitError } : {}) }
}

const misses = (r: ScenarioResult): CheckResult[] => (r.checks ?? []).filter((c) => !c.pass)

/**
 * Of two runs of one scenario, the one to report: the run with fewer targets missed, the first on
 * a tie or when the second failed. Its rows come whole from that run (no figure is taken from the
 * other), and `remeasured` keeps both runs' misses.
 */
export function confirmed(first: ScenarioResult, second: ScenarioResult): ScenarioResult {
  const a = misses(first)
  const b = second.failed === undefined ? misses(second) : []
  const keepSecond = second.failed === undefined && b.length < a.length
  const kept = keepSecond ? second : first
  const miss = (c: CheckResult): Miss => ({ row: c.row, target: c.target, actual: c.actual })
  kept.remeasured = {
    kept: keepSecond ? 'second' : 'first',
    first: a.map(miss),
    second: b.map(miss),
    ...(second.failed !== undefined ? { secondFailed: second.failed } : {})
  }
  return kept
}
