// The console (index.html): the tab bar, the token, the event stream, and which tab redraws when.
import { el, tokenField, admin, errorBox } from './api.js'
import { EventStream } from './events.js'
import { overviewTab } from './tab-overview.js'
import { feedTab } from './tab-feed.js'
import { connectionsTab, agentsTab } from './tabs-platform.js'
import { interactionsTab } from './tab-interactions.js'
import { journalTab } from './tab-journal.js'
import { governanceTab } from './tab-governance.js'
import { auditTab } from './tab-audit.js'
import { playgroundTab } from './tab-playground.js'

const stream = new EventStream()
const tabs = [
  overviewTab,
  feedTab,
  connectionsTab,
  agentsTab,
  playgroundTab,
  interactionsTab,
  journalTab,
  governanceTab,
  auditTab
]
const main = document.getElementById('main')
const nav = document.getElementById('tabs')
const streamState = document.getElementById('stream-state')
let current

document.getElementById('token-slot').append(
  tokenField(() => {
    stream.reconnect()
    show(current.id)
  })
)

stream.onStatus((state, detail) => {
  streamState.textContent = detail === '' ? `stream: ${state}` : `stream: ${state}, ${detail}`
  streamState.className = `stream ${state}`
})

// every tab is built once and kept (the feed keeps its rows while another tab is open)
const panels = new Map()
for (const tab of tabs) {
  const button = el(
    'button',
    {
      role: 'tab',
      id: `tab-${tab.id}`,
      'aria-controls': `panel-${tab.id}`,
      'aria-selected': 'false',
      tabindex: '-1',
      on: { click: () => show(tab.id) }
    },
    tab.label
  )
  nav.append(button)
  const panel = el('div', { role: 'tabpanel', id: `panel-${tab.id}`, 'aria-labelledby': `tab-${tab.id}`, hidden: true })
  main.append(panel)
  panels.set(tab.id, { tab, button, panel, state: tab.create?.(panel, stream) })
}

// arrow keys move between tabs, as in any tab list
nav.addEventListener('keydown', (e) => {
  const i = tabs.indexOf(current)
  if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
    const next = tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length]
    show(next.id)
    panels.get(next.id).button.focus()
    e.preventDefault()
  }
})

let refreshTimer
stream.onBatch((batch) => {
  for (const { tab, panel, state } of panels.values()) tab.events?.(batch, panel, state)
  // tables of the open tab reload when an event concerns them, at most twice a second
  const tab = current
  if (tab?.refreshOn === undefined || refreshTimer !== undefined) return
  if (!batch.some((e) => tab.refreshOn.includes(e.type))) return
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined
    // not under a reader who switched tabs or is typing in this one
    if (current === tab && !editing(panels.get(tab.id).panel)) void render(tab)
  }, 500)
})

function editing(panel) {
  const a = document.activeElement
  return a !== null && panel.contains(a) && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName) && a.value !== ''
}

// One render of a panel at a time: a tab's kept nodes (a message box, a field being typed into)
// are placed into each render's content, so two overlapping renders would take them from each
// other and the one that lands last could show the panel without them. A render asked for while
// one runs runs once after it.
async function render(tab) {
  const entry = panels.get(tab.id)
  if (tab.render === undefined) return
  if (entry.rendering !== undefined) {
    entry.again = true
    return entry.rendering
  }
  const { panel, state } = entry
  panel.setAttribute('aria-busy', 'true')
  entry.rendering = (async () => {
    do {
      entry.again = false
      try {
        const parts = [await tab.render(state)].flat()
        if (parts.some((p) => p instanceof Promise)) await drawParts(entry, parts)
        else {
          // a box the redraw moves (the decision viewer) loses its scroll position: the tab puts it back
          const restore = tab.keep?.(state)
          panel.replaceChildren(...parts)
          restore?.()
          entry.parts = undefined
        }
      } catch (err) {
        panel.replaceChildren(errorBox(err))
        entry.parts = undefined
      }
    } while (entry.again)
  })()
  try {
    await entry.rendering
  } finally {
    entry.rendering = undefined
    panel.setAttribute('aria-busy', 'false')
  }
}

// A tab whose parts load separately (the Agents tab's sections) renders them as promises: each is
// drawn in its place as soon as it is in, so the first table waits for no slower section. Until
// then the place keeps what the last render drew there (a refresh does not blank the tab), or a
// placeholder on the first render.
async function drawParts(entry, parts) {
  const before = entry.parts?.length === parts.length ? entry.parts : undefined
  const nodes = parts.map((p, i) =>
    p instanceof Promise
      ? (before?.[i] ?? el('section', { class: 'card', 'aria-busy': 'true' }, el('p', {}, 'Loading…')))
      : p
  )
  entry.panel.replaceChildren(...nodes)
  entry.parts = nodes
  await Promise.all(
    parts.map(async (p, i) => {
      if (!(p instanceof Promise)) return
      let node
      try {
        node = await p
      } catch (err) {
        node = errorBox(err)
      }
      nodes[i].replaceWith(node)
      nodes[i] = node
    })
  )
}

// `#tab` or `#tab?key=value`: the query is handed to the tab's next render (the playground links
// a turn to `#interactions?id=…` and `#journal?coordinationId=…`)
function show(hash) {
  const [id, query = ''] = hash.split('?', 2)
  const entry = panels.get(id) ?? panels.get('overview')
  current = entry.tab
  if (entry.state !== undefined) entry.state.params = query === '' ? undefined : new URLSearchParams(query)
  for (const { button, panel, tab } of panels.values()) {
    const on = tab === current
    button.setAttribute('aria-selected', String(on))
    button.tabIndex = on ? 0 : -1
    panel.hidden = !on
  }
  const want = entry.state?.params === undefined ? `#${current.id}` : `#${current.id}?${query}`
  if (location.hash !== want) history.replaceState(null, '', want)
  return render(current)
}

window.addEventListener('hashchange', () => void show(location.hash.slice(1)))
document.addEventListener('console-refresh', () => void render(current))
// the stream after the first view is drawn (or 2 s, whichever comes first): its replay of the
// recent events, handled as they come, competed with putting that view on screen
let connected = false
const connect = () => {
  if (connected) return
  connected = true
  stream.connect()
}
void show(location.hash.slice(1) || 'overview').finally(connect)
setTimeout(connect, 2000)
// for the browser tests and the curious: the stream and the REST helper
window.platformConsole = { stream, admin }
