import type { ScenarioResult } from '../scenario.js'

/**
 * What the committed baseline keeps: ratios only, peers' and the unit's (absolute figures do not
 * travel between machines).
 */
export interface Baseline {
  date: string
  node: string
  machine: string
  ratios: Record<string, number>
}

/** The pseudo-peer under which a row's figure against the unit of the machine is kept. */
export const UNIT_PEER = 'machine-unit'

/**
 * `scenario/row/peer` → ratio for every gated ratio in the results, and `scenario/row/machine-unit`
 * for every gated row in units: the unit against our figure (a time: how many times the raw
 * uWebSockets.js GET fits in it, inverted so that > 1 is still better; a rate: operations per
 * unit). Both are measured in the same run as their reference, so neither moves with the machine.
 */
export function ratiosOf(results: readonly ScenarioResult[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of results)
    for (const x of r.rows) {
      if (x.gate === false) continue
      for (const [peer, v] of Object.entries(x.ratios)) out[`${r.scenario}/${x.id}/${peer}`] = Number(v.toFixed(4))
      const u = x.units?.ours
      if (u !== undefined && Number.isFinite(u) && u > 0)
        out[`${r.scenario}/${x.id}/${UNIT_PEER}`] = Number((x.better === 'lower' ? 1 / u : u).toPrecision(4))
    }
  return out
}

export interface Regression {
  key: string
  baseline: number
  now: number | undefined
  change: number
}

/**
 * Ratios that fell more than `tolerance` (0.2 = 20%) below the baseline, or disappeared. Ratios
 * new since the baseline, and scenarios not run this time, are not regressions.
 */
export function regressions(
  base: Baseline,
  now: Record<string, number>,
  ranScenarios: ReadonlySet<string>,
  tolerance = 0.2
): Regression[] {
  const out: Regression[] = []
  for (const [key, b] of Object.entries(base.ratios)) {
    if (!ranScenarios.has(key.split('/')[0]!)) continue
    const n = now[key]
    if (n === undefined) {
      out.push({ key, baseline: b, now: undefined, change: -1 })
      continue
    }
    const change = n / b - 1
    if (change < -tolerance) out.push({ key, baseline: b, now: n, change })
  }
  return out
}
