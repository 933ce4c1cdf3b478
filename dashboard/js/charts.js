// Small line charts drawn as inline SVG from the metrics history: no charting library, nothing
// parsed from strings (every node is created and its attributes set one by one), colours from
// the stylesheet (classes, no style attributes: the CSP forbids them).
import { el } from './api.js'

const SVG = 'http://www.w3.org/2000/svg'
const W = 300
const H = 90
const PAD = 4

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  return node
}

function format(v) {
  if (v === null || v === undefined) return '—'
  return Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(2)
}

/**
 * One chart: `lines` [{ label, key, kind }] read from `points` (oldest first), all on one scale
 * from 0 to the largest value; a null value (a minute without turns) breaks the line.
 */
export function lineChart({ id, title, unit = '', lines }, points) {
  let max = 0
  for (const p of points) for (const l of lines) if (typeof p[l.key] === 'number') max = Math.max(max, p[l.key])
  const top = max === 0 ? 1 : max
  const x = (i) => PAD + (i * (W - 2 * PAD)) / Math.max(1, points.length - 1)
  const y = (v) => H - PAD - (v / top) * (H - 2 * PAD)
  const last = points.at(-1) ?? {}
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', preserveAspectRatio: 'none' })
  chart.append(svg('line', { x1: 0, y1: H - PAD, x2: W, y2: H - PAD, class: 'axis' }))
  const said = []
  for (const l of lines) {
    // consecutive non-null values make one path; a gap starts another
    let d = ''
    let open = false
    points.forEach((p, i) => {
      const v = p[l.key]
      if (typeof v !== 'number') {
        open = false
        return
      }
      d += `${open ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`
      open = true
    })
    if (d !== '') chart.append(svg('path', { d, class: `series ${l.kind}`, 'data-series': l.key }))
    // a dot on the latest value: a minute standing alone (a first turn) draws no line
    const at = points.findLastIndex((p) => typeof p[l.key] === 'number')
    if (at >= 0) chart.append(svg('circle', { cx: x(at), cy: y(points[at][l.key]), r: 2.5, class: `dot ${l.kind}` }))
    said.push(`${l.label} ${format(last[l.key])}${unit}`)
  }
  chart.setAttribute('aria-label', `${title}, last hour: now ${said.join(', ')}; peak ${format(max)}${unit}`)
  const legend = el(
    'p',
    { class: 'legend' },
    lines.map((l) => el('span', { class: `key ${l.kind}` }, `${l.label} ${format(last[l.key])}${unit}`))
  )
  return el(
    'figure',
    { class: 'chart-card', 'data-chart': id },
    el('figcaption', {}, title, el('span', { class: 'muted' }, ` (peak ${format(max)}${unit})`)),
    chart,
    legend
  )
}

export const OVERVIEW_CHARTS = [
  { id: 'turns', title: 'Turns per minute', lines: [{ label: 'turns', key: 'turns', kind: 'a' }] },
  {
    id: 'latency',
    title: 'Turn latency',
    unit: ' ms',
    lines: [
      { label: 'p50', key: 'p50', kind: 'a' },
      { label: 'p95', key: 'p95', kind: 'b' }
    ]
  },
  { id: 'tokens', title: 'Tokens per second', lines: [{ label: 'tokens/s', key: 'tokensPerSecond', kind: 'a' }] },
  {
    id: 'failures',
    title: 'Denials and errors per minute',
    lines: [
      { label: 'denials', key: 'denials', kind: 'b' },
      { label: 'errors', key: 'errors', kind: 'bad' }
    ]
  },
  {
    id: 'load',
    title: 'Connections and sessions',
    lines: [
      { label: 'connections', key: 'connections', kind: 'a' },
      { label: 'sessions', key: 'sessions', kind: 'b' }
    ]
  }
]
