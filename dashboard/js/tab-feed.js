// Live feed: every stream event as a row, newest on top, the last 500 kept; pause holds new rows
// back (counted) until resumed; a type filter hides the others.
import { el, scrollTable, time, text } from './api.js'

const KEEP = 500

function summary(e) {
  const rest = { ...e }
  delete rest.type
  delete rest.seq
  delete rest.timestamp
  return Object.entries(rest)
    .map(([k, v]) => `${k}=${text(v)}`)
    .join(' ')
}

export const feedTab = {
  id: 'feed',
  label: 'Live feed',
  create(panel) {
    const state = { paused: false, held: [], filter: '', types: new Set() }
    const pause = el('button', { type: 'button', 'aria-pressed': 'false', on: { click: () => toggle(state) } }, 'Pause')
    const filter = el(
      'select',
      { 'aria-label': 'Filter by type', on: { change: () => refilter(state) } },
      el('option', { value: '' }, 'All types')
    )
    const held = el('span', { class: 'muted', 'aria-live': 'polite' })
    const body = el('tbody')
    const count = el('span', { class: 'muted' }, '0 events')
    Object.assign(state, { pause, filter, held: [], heldLabel: held, body, count })
    panel.append(
      el('div', { class: 'toolbar' }, pause, filter, held, count),
      scrollTable(['Seq', 'Time', 'Type', 'Details'], body, 'scroll feed')
    )
    return state
  },
  events(batch, _panel, state) {
    if (state.paused) {
      state.held.push(...batch)
      if (state.held.length > KEEP) state.held.splice(0, state.held.length - KEEP)
      state.heldLabel.textContent = `${state.held.length} new while paused`
      return
    }
    add(state, batch)
  }
}

function add(state, batch) {
  const fresh = batch.length > KEEP ? batch.slice(-KEEP) : batch
  const frag = document.createDocumentFragment()
  for (let i = fresh.length - 1; i >= 0; i--) {
    const e = fresh[i]
    if (!state.types.has(e.type)) {
      state.types.add(e.type)
      state.filter.append(el('option', { value: e.type }, e.type))
    }
    const row = el(
      'tr',
      { class: 'new', 'data-type': e.type },
      el('td', {}, text(e.seq)),
      el('td', {}, time(e.timestamp)),
      el('td', {}, el('span', { class: `type ${/Disconnect|Destroy|fail/i.test(e.type) ? 'bad' : ''}` }, e.type)),
      el('td', { class: 'details' }, summary(e))
    )
    if (state.filter.value !== '' && e.type !== state.filter.value) row.hidden = true
    frag.append(row)
  }
  // the highlight marks rows of this batch only: the previous batch's rows lose it
  for (const r of state.body.querySelectorAll('tr.new')) r.classList.remove('new')
  state.body.prepend(frag)
  while (state.body.rows.length > KEEP) state.body.lastElementChild.remove()
  state.count.textContent = `${state.body.rows.length} events`
}

function toggle(state) {
  state.paused = !state.paused
  state.pause.textContent = state.paused ? 'Resume' : 'Pause'
  state.pause.setAttribute('aria-pressed', String(state.paused))
  if (!state.paused) {
    const held = state.held
    state.held = []
    state.heldLabel.textContent = ''
    add(state, held)
  }
}

function refilter(state) {
  const t = state.filter.value
  for (const r of state.body.rows) r.hidden = t !== '' && r.dataset.type !== t
}
