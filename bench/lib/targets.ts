import { readFileSync } from 'node:fs'
import type { CheckResult, ScenarioResult } from '../scenario.js'

export interface Target {
  scenario: string
  row: string
  peer?: string
  minRatio?: number
  max?: number
  min?: number
  source?: string
}

export function loadTargets(file: string): Target[] {
  const j = JSON.parse(readFileSync(file, 'utf8')) as { targets: Target[] }
  for (const t of j.targets) {
    if (typeof t.scenario !== 'string' || typeof t.row !== 'string')
      throw new Error(`${file}: every target needs scenario and row`)
    const kinds = [t.minRatio !== undefined, t.max !== undefined, t.min !== undefined].filter(Boolean).length
    if (kinds !== 1) throw new Error(`${file}: target ${t.scenario}/${t.row} needs exactly one of minRatio, max, min`)
    if (t.minRatio !== undefined && t.peer === undefined)
      throw new Error(`${file}: target ${t.scenario}/${t.row} has minRatio without peer`)
  }
  return j.targets
}

/** Evaluates the targets of one scenario against its rows; a row not produced fails as not measured. */
export function checkTargets(result: ScenarioResult, targets: readonly Target[]): CheckResult[] {
  const out: CheckResult[] = []
  for (const t of targets) {
    if (t.scenario !== result.scenario) continue
    const r = result.rows.find((x) => x.id === t.row)
    if (t.minRatio !== undefined) {
      const actual = r?.ratios[t.peer!]
      out.push({
        scenario: t.scenario,
        row: t.row,
        target: `ratio vs ${t.peer} >= ${t.minRatio}`,
        actual,
        pass: actual !== undefined && actual >= t.minRatio
      })
    } else {
      const actual = r?.ours
      const unit = r?.unit ?? ''
      if (t.max !== undefined)
        out.push({
          scenario: t.scenario,
          row: t.row,
          target: `<= ${t.max} ${unit}`.trim(),
          actual,
          pass: actual !== undefined && actual <= t.max
        })
      else
        out.push({
          scenario: t.scenario,
          row: t.row,
          target: `>= ${t.min!} ${unit}`.trim(),
          actual,
          pass: actual !== undefined && actual >= t.min!
        })
    }
  }
  return out
}
