// Journal: coordination events filtered by coordination and agent, and one coordination's execution
// graph.
import { el, admin, table, badge, errorBox, time } from './api.js'
import { graph, journalGraph } from './graph.js'

export const journalTab = {
  id: 'journal',
  label: 'Journal',
  create() {
    return { coordinationId: '', agent: '' }
  },
  async render(state) {
    // a link to one coordination (`#journal?coordinationId=…`, from the playground) filters by it and draws it
    const asked = state.params?.get('coordinationId')
    state.params = undefined
    if (asked) {
      state.coordinationId = asked
      state.agent = ''
    }
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
      // the old rows stay until the new ones are ready: no blank table while the request runs
      try {
        const events = await admin(`/journal?${q}`)
        results.replaceChildren(
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
        results.replaceChildren(errorBox(err))
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
    if (asked) await drawGraph(asked, graphBox)
    // the graph above the rows: picked from a long table, it would otherwise draw out of sight
    return el('section', { class: 'card' }, el('h2', {}, 'Coordination journal'), form, graphBox, results)
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
  // the row clicked may be far down the table: bring the graph to the top of the view
  box.scrollIntoView({ block: 'start' })
}
