// Overview: counters read once, then kept current from the event stream (no polling timer), and
// the last hour as charts, read again when the stream says a turn ended or a connection changed.
import { el, admin, errorBox } from './api.js'
import { lineChart, OVERVIEW_CHARTS } from './charts.js'

// events after which the charts are read again, at most once a second
const CHART_EVENTS = new Set([
  'TurnCompleted',
  'ResourceConnected',
  'ResourceDisconnected',
  'AgentSessionStarted',
  'AgentSessionEnded'
])

const COUNTERS = [
  ['status', 'Status'],
  ['connections', 'Connections'],
  ['broadcasters', 'Broadcasters'],
  ['agentCount', 'Agents'],
  ['activeSessions', 'Active sessions'],
  ['taskCount', 'Tasks'],
  ['aiRuntime', 'AI runtime']
]

const DELTAS = {
  ResourceConnected: ['connections', 1],
  ResourceDisconnected: ['connections', -1],
  BroadcasterCreated: ['broadcasters', 1],
  BroadcasterDestroyed: ['broadcasters', -1],
  AgentSessionStarted: ['activeSessions', 1],
  AgentSessionEnded: ['activeSessions', -1]
}

export const overviewTab = {
  id: 'overview',
  label: 'Overview',
  create(panel) {
    const values = new Map()
    const grid = el('dl', { class: 'counters' })
    for (const [key, label] of COUNTERS) {
      const dd = el('dd', { 'data-counter': key }, '…')
      values.set(key, dd)
      grid.append(el('div', { class: 'counter' }, el('dt', {}, label), dd))
    }
    const charts = el('div', { class: 'charts', 'aria-label': 'The last hour' })
    const state = { grid, values, data: undefined, charts, chartsTimer: undefined }
    panel.append(grid, charts)
    return state
  },
  async render(state) {
    // both reads at once: the charts' need not wait for the counters'
    const charts = drawCharts(state)
    try {
      state.data = await admin('/overview')
    } catch (err) {
      await charts
      return [state.grid, errorBox(err)]
    }
    paint(state)
    await charts
    return [state.grid, state.charts]
  },
  events(batch, _panel, state) {
    if (state.data === undefined) return
    if (state.chartsTimer === undefined && batch.some((e) => CHART_EVENTS.has(e.type)))
      state.chartsTimer = setTimeout(() => {
        state.chartsTimer = undefined
        void drawCharts(state)
      }, 1000)
    let changed = false
    // a task event does not say whether the task is new: the count is read again, once per batch
    let refetch = false
    for (const e of batch) {
      const d = DELTAS[e.type]
      if (d !== undefined) {
        state.data[d[0]] = Math.max(0, (state.data[d[0]] ?? 0) + d[1])
        changed = true
      } else if (e.type === 'TaskStateChanged') refetch = true
    }
    if (changed) paint(state)
    if (refetch)
      admin('/overview').then(
        (data) => {
          state.data = data
          paint(state)
        },
        () => undefined
      )
  }
}

async function drawCharts(state) {
  try {
    const history = await admin('/metrics/history')
    state.charts.replaceChildren(...OVERVIEW_CHARTS.map((c) => lineChart(c, history.points)))
  } catch (err) {
    state.charts.replaceChildren(errorBox(err))
  }
}

function paint(state) {
  for (const [key] of COUNTERS) {
    const v = state.data[key]
    const dd = state.values.get(key)
    dd.textContent = v === undefined || v === null ? '—' : String(v)
    dd.className = key === 'status' ? (v === 'UP' ? 'ok' : 'bad') : ''
  }
}
