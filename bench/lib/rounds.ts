import { loadavg } from 'node:os'
import type { RoundsInfo } from '../scenario.js'
import { median } from './stats.js'

/** What `alternate` measured: every round of every subject, the median round of each, the load. */
export interface Alternated<M> {
  /** Each subject's rounds, in round order. */
  all: Map<string, M[]>
  /** Each subject's median round by the figure `key` picks. */
  median: Map<string, M>
  info: RoundsInfo
}

/**
 * Measures every subject once per round, the order rotated each round (round r starts with
 * subject r), so a neighbour's burst of load on a shared machine lands on different subjects in
 * different rounds instead of always on the one measured at that moment; the figure kept per
 * subject is its median round. The load average is read before each round, for the report.
 */
export async function alternate<M>(
  subjects: readonly string[],
  rounds: number,
  measure: (subject: string, round: number) => Promise<M>,
  key: (m: M) => number,
  signal?: AbortSignal
): Promise<Alternated<M>> {
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`rounds must be a whole number >= 1, got ${rounds}`)
  if (subjects.length === 0) throw new Error('alternate: no subject to measure')
  const all = new Map<string, M[]>(subjects.map((s) => [s, []]))
  const loadAverages: number[] = []
  for (let r = 0; r < rounds; r++) {
    loadAverages.push(Number(loadavg()[0]!.toFixed(2)))
    for (let i = 0; i < subjects.length; i++) {
      if (signal?.aborted === true) throw new Error('aborted')
      const s = subjects[(i + r) % subjects.length]!
      all.get(s)!.push(await measure(s, r))
    }
  }
  const med = new Map<string, M>([...all].map(([s, ms]) => [s, median(ms, key)]))
  return { all, median: med, info: { count: rounds, loadAverages } }
}

/** The `--rounds` value when given, else the scenario's default. */
export function roundsOf(opts: { rounds?: number }, fallback: number): number {
  return opts.rounds ?? fallback
}
