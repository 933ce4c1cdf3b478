// Interactions (list and a live step timeline), the journal with its graph, governance, audit.
import { el, api, admin, table, badge, section, errorBox, time, text, token, ApiError } from './api.js'
import { graph, journalGraph } from './graph.js'

let following

/** key=value pairs of a small object; nothing for an empty one (a bare `{}` says nothing). */
function pairs(o) {
  if (o === null || typeof o !== 'object') return text(o)
  return Object.entries(o)
    .map(([k, v]) => `${k}=${text(v)}`)
    .join(' ')
}

function stepRow(s) {
  const what =
    s.type === 'text'
      ? s.text
      : s.toolName
        ? `${s.toolName} ${pairs(s.data)}`
        : pairs(s.type === 'usage' ? s.usage : s.data)
  return el(
    'li',
    { class: `step ${s.type === 'error' ? 'bad' : ''}` },
    el('span', { class: 'seq' }, `#${s.seq}`),
    badge(s.type),
    el('span', { class: 'what' }, what ?? ''),
    el('time', {}, time(s.createdAt))
  )
}

/** Replays and then follows one interaction's steps on /platform/interactions-stream. */
function follow(id, list, status) {
  following?.close()
  const q = new URLSearchParams({ id })
  if (token() !== '') q.set('access_token', token())
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:'
  const ws = new WebSocket(`${proto}//${location.host}/platform/interactions-stream?${q}`)
  following = ws
  const seen = new Set()
  ws.onmessage = (m) => {
    const f = JSON.parse(m.data)
    if (f.type === 'interaction-step' && !seen.has(f.step.seq)) {
      seen.add(f.step.seq)
      list.append(stepRow(f.step))
    } else if (f.type === 'interaction-terminal')
      status.replaceChildren(badge(f.status, f.status === 'COMPLETED' ? 'ok' : 'bad'), f.errorMessage ?? '')
  }
  ws.onerror = () => status.replaceChildren(el('span', { class: 'bad' }, 'live stream unavailable'))
}

async function openInteraction(id, box) {
  box.replaceChildren(el('p', { class: 'muted' }, 'Loading…'))
  try {
    const it = await api(`/api/interactions/${encodeURIComponent(id)}`)
    const list = el('ol', { class: 'timeline' })
    const status = el('p', {}, badge(it.status, it.status === 'COMPLETED' ? 'ok' : it.status === 'FAILED' ? 'bad' : ''))
    box.replaceChildren(el('h3', {}, `Interaction ${it.id}`), status, list)
    follow(id, list, status)
  } catch (err) {
    box.replaceChildren(errorBox(err))
  }
}

export const interactionsTab = {
  id: 'interactions',
  label: 'Interactions',
  async render() {
    const detail = el('div', { class: 'card' })
    let rows
    try {
      rows = await api('/api/interactions?limit=100')
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.body?.code === 'PLT_ERR_NOT_FOUND')
        return el('p', { class: 'empty' }, 'The interactions API is not installed on this platform.')
      throw err
    }
    const list = table(
      [
        {
          label: 'Id',
          value: (i) =>
            el('button', { type: 'button', class: 'link', on: { click: () => openInteraction(i.id, detail) } }, i.id)
        },
        {
          label: 'Status',
          value: (i) => badge(i.status, i.status === 'COMPLETED' ? 'ok' : i.status === 'FAILED' ? 'bad' : '')
        },
        { label: 'Agent', value: (i) => i.agentId ?? '' },
        { label: 'Model', value: (i) => i.model ?? '' },
        { label: 'Created', value: (i) => time(i.createdAt) }
      ],
      rows,
      'No interactions for this token yet.'
    )
    return [el('section', { class: 'card' }, el('h2', {}, 'Interactions'), list), detail]
  }
}

export const journalTab = {
  id: 'journal',
  label: 'Journal',
  create() {
    return { coordinationId: '', agent: '' }
  },
  async render(state) {
    const cid = el('input', {
      type: 'text',
      'aria-label': 'Coordination id',
      placeholder: 'coordination id',
      value: state.coordinationId
    })
    const agent = el('input', { type: 'text', 'aria-label': 'Agent', placeholder: 'agent', value: state.agent })
    const results = el('div')
    const graphBox = el('div', { class: 'graph-box' })
    const load = async () => {
      state.coordinationId = cid.value.trim()
      state.agent = agent.value.trim()
      const q = new URLSearchParams({ limit: '200' })
      if (state.coordinationId) q.set('coordinationId', state.coordinationId)
      if (state.agent) q.set('agent', state.agent)
      results.replaceChildren()
      try {
        const events = await admin(`/journal?${q}`)
        results.append(
          table(
            [
              { label: 'Time', value: (e) => time(e.timestamp) },
              { label: 'Type', value: (e) => badge(e.type, /fail/i.test(e.type) ? 'bad' : '') },
              {
                label: 'Coordination',
                value: (e) =>
                  el(
                    'button',
                    { type: 'button', class: 'link', on: { click: () => drawGraph(e.coordinationId, graphBox) } },
                    e.coordinationId
                  )
              },
              { label: 'Agent', value: (e) => e.agentName ?? e.agent ?? '' }
            ],
            events,
            'The journal is empty: no coordination has run (the fleet is not running on this platform).'
          )
        )
      } catch (err) {
        results.append(errorBox(err))
      }
    }
    const form = el(
      'form',
      { class: 'toolbar', on: { submit: (e) => (e.preventDefault(), load()) } },
      cid,
      agent,
      el('button', { type: 'submit' }, 'Filter')
    )
    await load()
    return el('section', { class: 'card' }, el('h2', {}, 'Coordination journal'), form, results, graphBox)
  }
}

async function drawGraph(id, box) {
  try {
    const events = await admin(`/journal/${encodeURIComponent(id)}/tree`)
    const { nodes, edges } = journalGraph(events)
    box.replaceChildren(el('h3', {}, `Coordination ${id}`), graph(nodes, edges, `Execution graph of ${id}`))
  } catch (err) {
    box.replaceChildren(errorBox(err))
  }
}

function killSwitch(health, out) {
  const ks = health.killSwitch ?? { armed: false }
  const reason = el('input', {
    type: 'text',
    'aria-label': 'Reason',
    placeholder: 'reason (required to arm)',
    required: true
  })
  const act = async (e) => {
    e.preventDefault()
    const arming = !ks.armed
    if (arming && reason.value.trim() === '') return
    if (
      !confirm(
        arming
          ? `Arm the kill switch? Every agent call will be denied.\nReason: ${reason.value}`
          : 'Disarm the kill switch?'
      )
    )
      return
    try {
      await admin(`/governance/kill-switch/${arming ? 'arm' : 'disarm'}`, {
        method: 'POST',
        body: arming ? { reason: reason.value.trim() } : {}
      })
      // the console redraws the open tab (the form may have been redrawn meanwhile)
      document.dispatchEvent(new Event('console-refresh'))
    } catch (err) {
      out.replaceChildren(errorBox(err))
    }
  }
  return el(
    'form',
    { class: 'toolbar', on: { submit: act } },
    el('span', {}, 'State:'),
    badge(ks.armed ? 'ARMED' : 'disarmed', ks.armed ? 'bad' : 'ok'),
    ks.armed ? el('span', {}, `${ks.reason ?? ''} (by ${ks.operator ?? '?'}, ${time(ks.armedAt)})`) : reason,
    el('button', { type: 'submit', class: ks.armed ? '' : 'danger' }, ks.armed ? 'Disarm' : 'Arm')
  )
}

function decisions(rows) {
  const byDecision = el(
    'select',
    { 'aria-label': 'Filter by decision' },
    ['', ...new Set(rows.map((r) => r.decision).filter(Boolean))].map((d) =>
      el('option', { value: d }, d === '' ? 'All decisions' : d)
    )
  )
  const byPolicy = el('input', { type: 'text', 'aria-label': 'Filter by policy', placeholder: 'policy' })
  const box = el('div')
  const paint = () => {
    const d = byDecision.value
    const p = byPolicy.value.trim()
    const shown = rows.filter(
      (r) => (d === '' || r.decision === d) && (p === '' || String(r.matched_policy ?? r.policy ?? '').includes(p))
    )
    box.replaceChildren(
      table(
        [
          { label: 'Time', value: (r) => time(r.timestamp) },
          { label: 'Decision', value: (r) => badge(r.decision, r.decision === 'deny' ? 'bad' : 'ok') },
          { label: 'Policy', value: (r) => r.matched_policy ?? r.policy ?? '' },
          { label: 'Agent', value: (r) => r.agent_id ?? r.agentId ?? '' },
          { label: 'Reason', value: (r) => r.reason ?? '' }
        ],
        shown,
        rows.length === 0 ? 'No decisions recorded yet.' : 'No decisions match the filter.'
      )
    )
  }
  byDecision.addEventListener('change', paint)
  byPolicy.addEventListener('input', paint)
  paint()
  return el('div', {}, el('div', { class: 'toolbar' }, byDecision, byPolicy), box)
}

export const governanceTab = {
  id: 'governance',
  label: 'Governance',
  refreshOn: ['ControlActionExecuted'],
  async render() {
    const out = el('div', { 'aria-live': 'polite' })
    const health = await admin('/governance/health').catch((err) => err)
    const ks = el(
      'section',
      { class: 'card' },
      el('h2', {}, 'Kill switch'),
      out,
      health instanceof Error ? errorBox(health) : killSwitch(health, out)
    )
    return [
      ks,
      await section('Policies', async () =>
        table(
          [
            { label: 'Name', value: (p) => p.name },
            { label: 'Source', value: (p) => p.source },
            { label: 'Version', value: (p) => p.version },
            { label: 'Digest', value: (p) => el('code', {}, String(p.digest ?? '').slice(0, 19)) }
          ],
          await admin('/governance/policies'),
          'No policies loaded.'
        )
      ),
      await section('Decisions', async () => decisions(await admin('/governance/decisions?limit=200'))),
      await section('OWASP agentic top 10', async () => {
        const m = await admin('/governance/owasp')
        return table(
          [
            { label: 'Id', value: (r) => r.id },
            { label: 'Risk', value: (r) => r.title },
            {
              label: 'Coverage',
              value: (r) =>
                badge(
                  r.coverage,
                  r.coverage === 'COVERED' || r.coverage === 'FULL' ? 'ok' : r.coverage === 'PARTIAL' ? 'warn' : 'bad'
                )
            },
            { label: 'Notes', value: (r) => r.notes }
          ],
          m.rows
        )
      }),
      await section('Commitments', async () => {
        const rows = await admin('/commitments').catch((err) => {
          if (err instanceof ApiError && err.status === 404) return []
          throw err
        })
        return table(
          [
            { label: 'Id', value: (c) => c.id },
            { label: 'Agent', value: (c) => c.agent ?? c.agentName ?? '' },
            {
              label: 'Verified',
              value: (c) => badge(c.verified ? 'verified' : 'unverified', c.verified ? 'ok' : 'bad')
            }
          ],
          rows,
          'No commitments: the fleet is not running on this platform.'
        )
      })
    ]
  }
}

export const auditTab = {
  id: 'audit',
  label: 'Audit',
  refreshOn: ['ControlActionExecuted'],
  async render() {
    const rows = await admin('/audit?limit=500')
    return section('Control audit log', async () =>
      table(
        [
          { label: 'Time', value: (r) => time(r.timestamp) },
          { label: 'Principal', value: (r) => r.principal },
          { label: 'Action', value: (r) => r.action },
          { label: 'Target', value: (r) => r.target },
          { label: 'Result', value: (r) => badge(r.success ? 'ok' : 'failed', r.success ? 'ok' : 'bad') },
          { label: 'Message', value: (r) => r.message }
        ],
        rows.slice().reverse(),
        'No control actions yet.'
      )
    )
  }
}
