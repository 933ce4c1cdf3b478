import type { ScenarioResult } from '../scenario.js'

/** What the committed baseline keeps: ratios only (absolute figures do not travel between machines). */
export interface Baseline {
  date: string
  node: string
  machine: string
  ratios: Record<string, number>
}

/** `scenario/row/peer` → ratio for every gated ratio in the results. */
export function ratiosOf(results: readonly ScenarioResult[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of results)
    for (const x of r.rows)
      if (x.gate !== false)
        for (const [peer, v] of Object.entries(x.ratios)) out[`${r.scenario}/${x.id}/${peer}`] = Number(v.toFixed(4))
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
