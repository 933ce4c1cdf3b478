// A small layered SVG graph (nodes left to right by depth) for workflows and journal coordinations.
const NS = 'http://www.w3.org/2000/svg'

function svg(tag, attrs = {}) {
  const n = document.createElementNS(NS, tag)
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v))
  return n
}

/** Columns by longest path from a root; cycles and unknown endpoints are tolerated. */
export function layout(nodes, edges) {
  const ids = new Set(nodes.map((n) => n.id))
  const depth = new Map(nodes.map((n) => [n.id, 0]))
  const valid = edges.filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to)
  for (let pass = 0; pass < nodes.length; pass++) {
    let changed = false
    for (const e of valid) {
      const d = depth.get(e.from) + 1
      if (d > depth.get(e.to) && d < nodes.length) {
        depth.set(e.to, d)
        changed = true
      }
    }
    if (!changed) break
  }
  // rows column by column, each node placed by the mean row of its parents so edges rarely cross
  const byCol = new Map()
  for (const n of nodes) {
    const col = depth.get(n.id)
    byCol.set(col, [...(byCol.get(col) ?? []), n.id])
  }
  const pos = new Map()
  for (const col of [...byCol.keys()].sort((a, b) => a - b)) {
    const weight = (id) => {
      const parents = valid.filter((e) => e.to === id && pos.has(e.from)).map((e) => pos.get(e.from).row)
      return parents.length === 0 ? Infinity : parents.reduce((a, b) => a + b, 0) / parents.length
    }
    const ids = byCol.get(col)
    const w = new Map(ids.map((id, i) => [id, [weight(id), i]]))
    ids.sort((a, b) => w.get(a)[0] - w.get(b)[0] || w.get(a)[1] - w.get(b)[1])
    ids.forEach((id, row) => pos.set(id, { col, row }))
  }
  return { pos, edges: valid }
}

const W = 180
const H = 44
const GX = 60
const GY = 24

/** nodes [{id, label, kind}] (kind picks the colour class), edges [{from, to, label}]. */
export function graph(nodes, edges, title) {
  const { pos, edges: valid } = layout(nodes, edges)
  let cols = 1
  let rowsMax = 1
  for (const p of pos.values()) {
    cols = Math.max(cols, p.col + 1)
    rowsMax = Math.max(rowsMax, p.row + 1)
  }
  const width = cols * (W + GX) + GX
  const height = rowsMax * (H + GY) + GY
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', class: 'graph' })
  const t = svg('title')
  t.textContent = title
  root.append(t)
  const defs = svg('defs')
  const marker = svg('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 10,
    refY: 5,
    markerWidth: 8,
    markerHeight: 8,
    orient: 'auto'
  })
  marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))
  defs.append(marker)
  root.append(defs)
  const at = (id) => {
    const p = pos.get(id)
    return { x: GX + p.col * (W + GX), y: GY + p.row * (H + GY) }
  }
  for (const e of valid) {
    const a = at(e.from)
    const b = at(e.to)
    root.append(
      svg('path', {
        d: `M${a.x + W},${a.y + H / 2} L${b.x},${b.y + H / 2}`,
        class: 'edge',
        'marker-end': 'url(#arrow)'
      })
    )
    if (e.label) {
      const l = svg('text', { x: (a.x + W + b.x) / 2, y: (a.y + b.y + H) / 2 - 4, class: 'edge-label' })
      l.textContent = e.label
      root.append(l)
    }
  }
  for (const n of nodes) {
    const p = at(n.id)
    const g = svg('g', { class: `node ${n.kind ?? ''}` })
    g.append(svg('rect', { x: p.x, y: p.y, width: W, height: H, rx: 6 }))
    // "type · agent" on two lines: the agent under the event type
    const s = String(n.label ?? n.id)
    const [first, second] = s.split(' · ')
    const cut = (v) => (v.length > 26 ? v.slice(0, 25) + '…' : v)
    const label = svg('text', { x: p.x + W / 2, y: p.y + (second === undefined ? H / 2 + 4 : H / 2 - 3) })
    label.textContent = cut(first)
    g.append(label)
    if (second !== undefined) {
      const sub = svg('text', { x: p.x + W / 2, y: p.y + H / 2 + 11, class: 'sub' })
      sub.textContent = cut(second)
      g.append(sub)
    }
    const tip = svg('title')
    tip.textContent = s
    g.append(tip)
    root.append(g)
  }
  return root
}

/** The tree `journal/{id}/tree` answers (nodes with `children`) as its events, each parent before its children. */
function flatten(tree) {
  const out = []
  const stack = [...tree].reverse()
  while (stack.length > 0) {
    const e = stack.pop()
    out.push(e)
    if (Array.isArray(e.children)) for (let i = e.children.length - 1; i >= 0; i--) stack.push(e.children[i])
  }
  return out
}

/**
 * A coordination's journal events as a graph: parent links when the journal has them, else in
 * order. Takes the tree the route answers or a flat list of events.
 */
export function journalGraph(tree) {
  const events = flatten(tree)
  const nodes = events.map((e, i) => {
    const id = String(e.eventId ?? i)
    const who = e.agentName ?? e.agent ?? e.toAgent ?? ''
    const kind = /fail|error/i.test(e.type)
      ? 'failed'
      : /complet/i.test(e.type)
        ? 'done'
        : /handoff/i.test(e.type)
          ? 'handoff'
          : /evaluat/i.test(e.type)
            ? 'eval'
            : ''
    return { id, label: who === '' ? e.type : `${e.type} · ${who}`, kind }
  })
  const linked = events.some((e) => e.parentEventId !== undefined && e.parentEventId !== null)
  const known = new Set(nodes.map((n) => n.id))
  const edges = []
  events.forEach((e, i) => {
    if (linked) {
      // a fork's parent lives in another coordination: no edge to a node not drawn
      if (e.parentEventId !== undefined && e.parentEventId !== null && known.has(String(e.parentEventId)))
        edges.push({ from: String(e.parentEventId), to: nodes[i].id })
    } else if (i > 0) edges.push({ from: nodes[i - 1].id, to: nodes[i].id })
  })
  return { nodes, edges }
}
