import { readFileSync } from 'node:fs'
import type { CheckResult, ScenarioResult } from '../scenario.js'
import { unitKind } from './machine-unit.js'

/**
 * A target from bench/targets.json: exactly one of `minRatio` (with `peer`), `maxUnits` /
 * `minUnits` (our figure in units of the machine, for times and rates) or `max` / `min` (our
 * figure in the row's own unit, for what does not move with the CPU: memory, bytes).
 */
export interface Target {
  scenario: string
  row: string
  peer?: string
  minRatio?: number
  maxUnits?: number
  minUnits?: number
  max?: number
  min?: number
  source?: string
}

export function loadTargets(file: string): Target[] {
  const j = JSON.parse(readFileSync(file, 'utf8')) as { targets: Target[] }
  for (const t of j.targets) {
    if (typeof t.scenario !== 'string' || typeof t.row !== 'string')
      throw new Error(`${file}: every target needs scenario and row`)
    const kinds = [t.minRatio, t.maxUnits, t.minUnits, t.max, t.min].filter((v) => v !== undefined)
    if (kinds.length !== 1)
      throw new Error(
        `${file}: target ${t.scenario}/${t.row} needs exactly one of minRatio, maxUnits, minUnits, max, min`
      )
    if (typeof kinds[0] !== 'number' || !Number.isFinite(kinds[0]) || kinds[0] <= 0)
      throw new Error(`${file}: target ${t.scenario}/${t.row} needs a positive number`)
    if (t.minRatio !== undefined && t.peer === undefined)
      throw new Error(`${file}: target ${t.scenario}/${t.row} has minRatio without peer`)
  }
  return j.targets
}

const sig = (v: number) => Number(v.toPrecision(3)).toString()

/**
 * Evaluates the targets of one scenario against its rows; a row not produced fails as not
 * measured, and so does a target in units when the unit was not measured. A `max` / `min` on a
 * row of time or rate fails: such a figure only means something in units of the machine.
 */
export function checkTargets(result: ScenarioResult, targets: readonly Target[], unitUs?: number): CheckResult[] {
  const out: CheckResult[] = []
  for (const t of targets) {
    if (t.scenario !== result.scenario) continue
    const r = result.rows.find((x) => x.id === t.row)
    const base = { scenario: t.scenario, row: t.row }
    if (t.minRatio !== undefined) {
      const actual = r?.ratios[t.peer!]
      out.push({
        ...base,
        target: `ratio vs ${t.peer} >= ${t.minRatio}`,
        actual,
        pass: actual !== undefined && actual >= t.minRatio
      })
    } else if (t.maxUnits !== undefined || t.minUnits !== undefined) {
      const actual = r?.units?.ours
      const rate = r !== undefined && unitKind(r.unit)?.kind === 'rate'
      const limit = (t.maxUnits ?? t.minUnits)!
      // the same limit in the row's own unit on this machine, for a reader who thinks in µs
      const here =
        unitUs === undefined || r === undefined
          ? ''
          : ` (${sig(rate ? (limit * 1e6) / unitUs : (limit * unitUs) / (unitKind(r.unit) as { usPer: number }).usPer)} ${r.unit} at ${sig(unitUs)} µs per unit)`
      const per = rate ? ' per unit' : ' units'
      const target = `${t.maxUnits !== undefined ? '<=' : '>='} ${limit}${per}${here}`
      const pass = actual !== undefined && (t.maxUnits !== undefined ? actual <= limit : actual >= limit)
      out.push({ ...base, target, actual, pass, inUnits: true })
    } else {
      const actual = r?.ours
      const unit = r?.unit ?? ''
      const limit = (t.max ?? t.min)!
      const target = `${t.max !== undefined ? '<=' : '>='} ${limit} ${unit}`.trim()
      if (r !== undefined && unitKind(r.unit) !== undefined) {
        out.push({
          ...base,
          target: `${target}: a time or rate target must be in units (maxUnits, minUnits)`,
          actual,
          pass: false
        })
        continue
      }
      const pass = actual !== undefined && (t.max !== undefined ? actual <= limit : actual >= limit)
      out.push({ ...base, target, actual, pass })
    }
  }
  return out
}
