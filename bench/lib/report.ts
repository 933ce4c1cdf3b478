import { cpus, totalmem, release, loadavg } from 'node:os'
import { spawnSync } from 'node:child_process'
import type { Miss, ScenarioResult } from '../scenario.js'
import type { Target } from './targets.js'
import { unitKind, type MachineUnit } from './machine-unit.js'

export interface Machine {
  cpu: string
  cores: number
  memoryGb: number
  kernel: string
  node: string
  loadTool: string
  /** 1-minute load average when the report was written: above the core count, other work shared the CPUs */
  loadAverage?: number
}

export interface Report {
  date: string
  mode: 'quick' | 'full'
  command: string
  machine: Machine
  /** The unit of the machine every time and rate is also stated in (bench/lib/machine-unit.ts). */
  unit?: MachineUnit
  /** Why the unit is missing, when it could not be measured. */
  unitError?: string
  /** Uncaught errors raised between scenarios (none belongs to a scenario's figures). */
  strayErrors?: string[]
  results: ScenarioResult[]
}

export function describeMachine(wrk: string | null): Machine {
  let loadTool = 'autocannon 9 (wrk not installed)'
  if (wrk !== null) {
    const v = spawnSync(wrk, ['-v'], { encoding: 'utf8' })
    loadTool = (/wrk [^\s]+/.exec(v.stdout + v.stderr)?.[0] ?? 'wrk').trim()
  }
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: `Linux ${release()}`,
    node: process.version,
    loadTool,
    loadAverage: Number(loadavg()[0]!.toFixed(2))
  }
}

/** Numbers for humans: thousands separators from 1 000, three significant digits below. */
export function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '—'
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US').replace(/,/g, ' ')
  if (v === 0) return '0'
  return Number(v.toPrecision(3)).toString()
}

const fmtRatio = (v: number | undefined) => (v === undefined ? '—' : `${v.toFixed(2)}x`)
/** A checked figure as its target reads: a ratio, else the figure (in units when the target is). */
const checkFigure = (c: Miss): string => (c.target.startsWith('ratio') ? fmtRatio(c.actual) : fmt(c.actual))

export function markdown(rep: Report): string {
  const m = rep.machine
  const out: string[] = []
  out.push(`# Benchmark results (${rep.mode} run)`, '')
  out.push(`- date: ${rep.date}`)
  out.push(
    `- machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, ${m.kernel}${m.loadAverage !== undefined ? `; load average ${m.loadAverage} at the end of the run${m.loadAverage > m.cores ? ' (other work shared the cores: trust CPU per operation over throughput)' : ''}` : ''}`
  )
  out.push(
    `- Node ${m.node}; HTTP load: ${m.loadTool}; WebSocket load: bench/lib/ws-load (worker threads, raw RFC 6455 client)`
  )
  out.push(`- command: \`${rep.command}\``)
  if (rep.unit !== undefined)
    out.push(
      `- **1 unit = ${fmt(rep.unit.us)} µs**: the raw uWebSockets.js server's CPU per JSON GET in this run (${rep.unit.source === 'http-json' ? "`http-json`'s `uws-raw` peer" : 'measured before the first scenario: median of three 2-s windows under 100 connections'}${rep.unit.loadAverage !== undefined ? `, load average ${rep.unit.loadAverage}` : ''}); times are also stated in units, rates in operations per unit, and targets on them are in units`
    )
  else if (rep.unitError !== undefined) out.push(`- unit of the machine not measured: ${rep.unitError}`)
  for (const e of rep.strayErrors ?? []) out.push(`- an uncaught error between scenarios: ${e}`)
  out.push(
    '- ratio > 1 means the platform is better (ours/peer for throughput, peer/ours for latency, CPU and memory).',
    ''
  )
  const checks = rep.results.flatMap((r) => r.checks ?? [])
  if (checks.length > 0) {
    const twice = rep.results.filter((r) => r.remeasured !== undefined).map((r) => `\`${r.scenario}\``)
    out.push(
      `**Targets: ${checks.filter((c) => c.pass).length} of ${checks.length} met.**${twice.length > 0 ? ` Run twice after a miss: ${twice.join(', ')} (each says which run it reports).` : ''}`,
      ''
    )
  }
  const failed = rep.results.filter((r) => r.failed !== undefined)
  if (failed.length > 0)
    out.push(`**Failed: ${failed.map((r) => `\`${r.scenario}\``).join(', ')}** (the others ran).`, '')
  for (const r of rep.results) {
    out.push(`## ${r.scenario}`, '', r.description, '')
    if (r.failed !== undefined) out.push(`**Failed**: ${r.failed}`, '')
    if (r.skipped !== undefined) {
      out.push(`Skipped: ${r.skipped}`, '')
      continue
    }
    if (r.rows.length === 0) continue
    if (r.unit !== undefined)
      out.push(
        `Its figures in units use **1 unit = ${fmt(r.unit.us)} µs**, measured right before it (median of ${(r.unit.samples ?? [r.unit.us]).map((x) => fmt(x)).join(', ')} µs${r.unit.loadAverage !== undefined ? `; load average ${r.unit.loadAverage}` : ''}).`,
        ''
      )
    if (r.rounds !== undefined)
      out.push(
        `Median of ${r.rounds.count} alternating round(s); load average at each: ${r.rounds.loadAverages.join(', ')}.`,
        ''
      )
    const peers = [...new Set(r.rows.flatMap((x) => Object.keys(x.peers)))]
    const withUnits = r.rows.some((x) => x.units !== undefined)
    const head = [
      'figure',
      'unit',
      'platform',
      ...peers,
      ...peers.map((p) => `ratio vs ${p}`),
      ...(withUnits ? ['in units: platform (peers)'] : [])
    ]
    out.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`)
    for (const x of r.rows) {
      const u = x.units
      const inUnits =
        u === undefined
          ? '—'
          : `${fmt(u.ours)}${
              Object.keys(u.peers).length > 0
                ? ` (${Object.entries(u.peers)
                    .map(([p, v]) => `${p} ${fmt(v)}`)
                    .join(', ')})`
                : ''
            }${unitKind(x.unit)?.kind === 'rate' ? ' per unit' : ''}`
      out.push(
        `| ${[x.label + (x.gate === false ? ' †' : ''), x.unit, fmt(x.ours), ...peers.map((p) => fmt(x.peers[p])), ...peers.map((p) => fmtRatio(x.ratios[p])), ...(withUnits ? [inUnits] : [])].join(' | ')} |`
      )
    }
    if (r.rows.some((x) => x.gate === false))
      out.push('', '† reported, not gated by `bench:check` (too noisy on a shared machine)')
    out.push('')
    for (const c of r.checks ?? []) {
      out.push(`- ${c.pass ? 'PASS' : 'FAIL'} \`${c.row}\` ${c.target}: ${checkFigure(c)}`)
    }
    if ((r.checks ?? []).length > 0) out.push('')
    if (r.remeasured !== undefined) out.push(remeasuredLine(r.remeasured), '')
    for (const n of r.notes) out.push(`> ${n}  `)
    out.push('')
  }
  return out.join('\n')
}

interface Bar {
  label: string
  value: number
  target?: number
}

/** A horizontal bar chart of every ratio on a log scale centred on 1x (SVG, no dependencies). */
export function ratioChart(rep: Report, targets: readonly Target[]): string {
  const bars: Bar[] = []
  for (const r of rep.results) {
    for (const x of r.rows) {
      for (const [peer, v] of Object.entries(x.ratios)) {
        const t = targets.find((t) => t.scenario === r.scenario && t.row === x.id && t.peer === peer)?.minRatio
        bars.push({ label: `${r.scenario} ${x.label} vs ${peer}`, value: v, ...(t !== undefined ? { target: t } : {}) })
      }
    }
  }
  const W = 1040,
    left = 500,
    right = 70,
    rowH = 22,
    top = 40
  const H = top + bars.length * rowH + 30
  const lo = Math.log2(1 / 8),
    hi = Math.log2(16)
  const x = (v: number) => left + ((Math.min(hi, Math.max(lo, Math.log2(v))) - lo) / (hi - lo)) * (W - left - right)
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  const s: string[] = []
  s.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`
  )
  s.push(`<rect width="${W}" height="${H}" fill="#fff"/>`)
  s.push(
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(`Platform vs peers, ratio (> 1x = platform better), ${rep.mode} run ${rep.date.slice(0, 10)}, Node ${rep.machine.node}`)}</text>`
  )
  for (const g of [0.125, 0.25, 0.5, 1, 2, 4, 8, 16]) {
    s.push(`<line x1="${x(g)}" y1="${top - 6}" x2="${x(g)}" y2="${H - 24}" stroke="${g === 1 ? '#333' : '#ddd'}"/>`)
    s.push(`<text x="${x(g)}" y="${H - 10}" text-anchor="middle" fill="#555">${g}x</text>`)
  }
  bars.forEach((b, i) => {
    const y = top + i * rowH
    const pass = b.target !== undefined ? b.value >= b.target : b.value >= 1
    const x0 = x(1),
      x1 = x(b.value)
    s.push(`<text x="${left - 8}" y="${y + 14}" text-anchor="end">${esc(b.label)}</text>`)
    s.push(
      `<rect x="${Math.min(x0, x1)}" y="${y + 3}" width="${Math.max(1, Math.abs(x1 - x0))}" height="${rowH - 8}" fill="${pass ? '#3a8f4b' : '#c0392b'}"/>`
    )
    if (b.target !== undefined)
      s.push(
        `<line x1="${x(b.target)}" y1="${y + 1}" x2="${x(b.target)}" y2="${y + rowH - 3}" stroke="#000" stroke-width="2" stroke-dasharray="3,2"/>`
      )
    s.push(`<text x="${Math.max(x0, x1) + 4}" y="${y + 14}" fill="#222">${b.value.toFixed(2)}x</text>`)
  })
  s.push('</svg>')
  return s.join('\n')
}

/** Which of a scenario's two runs is reported, and what each missed. */
function remeasuredLine(m: NonNullable<ScenarioResult['remeasured']>): string {
  const misses = (list: Miss[]): string =>
    list.length === 0 ? 'none' : list.map((c) => `\`${c.row}\` ${checkFigure(c)}`).join(', ')
  const second =
    m.secondFailed !== undefined ? `the second failed (${m.secondFailed})` : `the second ${misses(m.second)}`
  return `Run twice: the first run missed a target, and a miss must reproduce. Missed in the first: ${misses(m.first)}; in ${second}. The figures above are the ${m.kept} run's.`
}
