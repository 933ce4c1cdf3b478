// The decision viewer: the decision log's newest entries, then every GovernanceDecision from the
// event stream on top as it happens (highlighted, one DOM update per stream batch, the newest 500
// kept). The filters by decision and policy apply to live rows as they arrive; pause holds new
// rows back (counted) until resumed. Built once: a redraw of the Governance tab moves it, never
// reloads it, so rows do not change under the reader's eyes.
import { el, admin, badge, scrollTable, time, errorBox } from './api.js'

const KEEP = 500
const DECISIONS = ['admit', 'deny', 'prefer', 'transform', 'error']
const KIND = { admit: 'ok', deny: 'bad', error: 'bad', prefer: 'warn', transform: 'warn' }

/** A decision log entry (`/governance/decisions`) as a row. */
function fromLog(r) {
  const s = r.context_snapshot ?? {}
  return {
    timestamp: r.timestamp,
    policy: r.policy_name ?? '',
    decision: r.decision ?? '',
    reason: r.reason ?? '',
    agentId: typeof s.agent_id === 'string' ? s.agent_id : '',
    phase: typeof s.phase === 'string' ? s.phase : ''
  }
}

/** A GovernanceDecision event as a row. */
function fromEvent(e) {
  return {
    timestamp: e.timestamp,
    policy: e.policy ?? '',
    decision: e.decision ?? '',
    reason: e.reason ?? '',
    agentId: e.agentId ?? '',
    phase: e.phase ?? ''
  }
}

// the stream's events carry the log's timestamp, so a decision read from the log and then seen on
// the stream (the replay, or a batch still on its way when the log was read) has the same key
const keyOf = (r) => [r.timestamp, r.policy, r.phase, r.decision, r.agentId, r.reason].join('\u0000')

export function decisionViewer() {
  const byDecision = el(
    'select',
    { 'aria-label': 'Filter by decision', on: { change: () => refilter() } },
    el('option', { value: '' }, 'All decisions'),
    DECISIONS.map((d) => el('option', { value: d }, d))
  )
  const byPolicy = el('input', {
    type: 'search',
    'aria-label': 'Filter by policy',
    placeholder: 'policy',
    on: { input: () => refilter() }
  })
  const pause = el('button', { type: 'button', 'aria-pressed': 'false', on: { click: () => toggle() } }, 'Pause')
  const heldLabel = el('span', { class: 'muted', 'aria-live': 'polite' })
  const count = el('span', { class: 'muted' })
  const problem = el('div')
  const body = el('tbody')
  const empty = el('p', { class: 'empty' }, 'Loading decisions…')
  const box = scrollTable(['Time', 'Decision', 'Policy', 'Phase', 'Agent', 'Reason'], body, 'scroll feed')
  // the whole card, so that building the tab's next redraw does not take it out of the current one
  const element = el(
    'section',
    { class: 'card decision-viewer' },
    el('h2', {}, 'Decisions'),
    el('div', { class: 'toolbar' }, byDecision, byPolicy, pause, heldLabel, count),
    problem,
    box,
    empty
  )
  // how many rows read from the log have each key and have not been seen on the stream yet: a
  // count, since identical decisions in the same millisecond are several rows
  const unmatched = new Map()
  let loaded = false
  let loading
  let paused = false
  let held = []
  // live rows that came before the log was read, merged into it then
  let early = []

  const matches = (r) => {
    const d = byDecision.value
    const p = byPolicy.value.trim()
    return (d === '' || r.dataset.decision === d) && (p === '' || r.dataset.policy.includes(p))
  }

  function row(r) {
    const tr = el(
      'tr',
      { 'data-decision': r.decision, 'data-policy': r.policy },
      el('td', { title: String(r.timestamp ?? '') }, time(r.timestamp)),
      el('td', {}, badge(r.decision, KIND[r.decision] ?? '')),
      el('td', {}, r.policy),
      el('td', {}, r.phase),
      el('td', {}, r.agentId),
      el('td', {}, r.reason)
    )
    tr.hidden = !matches(tr)
    return tr
  }

  function summarise() {
    const total = body.rows.length
    let shown = 0
    for (const r of body.rows) if (!r.hidden) shown++
    count.textContent = shown === total ? `${total} decisions` : `${shown} of ${total} decisions`
    empty.hidden = shown > 0
    empty.textContent = total === 0 ? 'No decisions recorded yet.' : 'No decisions match the filter.'
  }

  /** Stream rows the log already gave, taken out. */
  function fresh(rows) {
    if (unmatched.size === 0) return rows
    return rows.filter((r) => {
      const k = keyOf(r)
      const n = unmatched.get(k)
      if (n === undefined) return true
      if (n === 1) unmatched.delete(k)
      else unmatched.set(k, n - 1)
      return false
    })
  }

  /** Puts `rows` (newest first) on top, highlighted; the oldest beyond KEEP go. */
  function prepend(rows) {
    const frag = document.createDocumentFragment()
    // a burst beyond what is kept builds only the rows that stay
    for (const r of rows.length > KEEP ? rows.slice(0, KEEP) : rows) {
      const tr = row(r)
      tr.className = 'new'
      frag.append(tr)
    }
    for (const r of body.querySelectorAll('tr.new')) r.classList.remove('new')
    body.prepend(frag)
    while (body.rows.length > KEEP) body.lastElementChild.remove()
    summarise()
  }

  function refilter() {
    for (const r of body.rows) r.hidden = !matches(r)
    summarise()
  }

  function toggle() {
    paused = !paused
    pause.textContent = paused ? 'Resume' : 'Pause'
    pause.setAttribute('aria-pressed', String(paused))
    if (paused) return
    const rows = held
    held = []
    heldLabel.textContent = ''
    prepend(rows)
  }

  /** Reads the log once (again only after a failure, e.g. before a token was given). */
  async function load() {
    if (loaded) return
    loading ??= admin('/governance/decisions?limit=200')
      .then((entries) => {
        loaded = true
        box.hidden = false
        problem.replaceChildren()
        const logged = entries.map(fromLog)
        for (const r of logged) unmatched.set(keyOf(r), (unmatched.get(keyOf(r)) ?? 0) + 1)
        const rows = [...fresh(early), ...logged]
        early = []
        // newest first; ISO timestamps sort as text
        rows.sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
        prepend(rows.slice(0, KEEP))
      })
      .catch((err) => {
        problem.replaceChildren(errorBox(err))
        box.hidden = true
        empty.hidden = true
      })
      .finally(() => {
        loading = undefined
      })
    await loading
  }

  /** One stream batch: its decisions, newest first. */
  function events(batch) {
    let rows = []
    for (let i = batch.length - 1; i >= 0; i--)
      if (batch[i].type === 'GovernanceDecision') rows.push(fromEvent(batch[i]))
    if (rows.length === 0) return
    if (loaded) rows = fresh(rows)
    if (rows.length === 0) return
    if (!loaded) {
      early = [...rows, ...early].slice(0, KEEP)
    } else if (paused) {
      held = [...rows, ...held].slice(0, KEEP)
      heldLabel.textContent = `${held.length} new while paused`
    } else prepend(rows)
  }

  /** Before a redraw moves the viewer (a detached box loses its scroll position): what puts it back. */
  function holdScroll() {
    const top = box.scrollTop
    return () => {
      box.scrollTop = top
    }
  }

  return { element, load, events, holdScroll }
}
