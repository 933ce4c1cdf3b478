// The workflow editor: list, create, edit and delete manifests; JSON checked as you type, a graph
// preview, and a version conflict shown with the stored version and a way to load it. Runs and
// approvals are workflow-runs.js.
import { el, admin, table, tokenField, errorBox, ApiError } from './api.js'
import { graph } from './graph.js'
import { approvals, coordinators, recent, run } from './workflow-runs.js'

const list = document.getElementById('wf-list')
const editor = document.getElementById('wf-json')
const messages = document.getElementById('wf-messages')
const preview = document.getElementById('wf-graph')
let timer
const TYPES = ['agent', 'condition', 'fan-out', 'join', 'approval', 'output']

document.getElementById('token-slot').append(
  tokenField(() => {
    void refresh()
    void approvals()
  })
)

const TEMPLATE = {
  id: 'my-workflow',
  name: 'My workflow',
  description: '',
  version: 0,
  nodes: [
    { id: 'start', type: 'agent', label: 'Research', config: { agent: 'demo' } },
    { id: 'review', type: 'approval', label: 'Human review', config: {} },
    { id: 'done', type: 'output', label: 'Done', config: {} }
  ],
  edges: [
    { from: 'start', to: 'review' },
    { from: 'review', to: 'done' }
  ]
}

/** What the server will refuse, said before saving (the server's answer stays the authority). */
export function problems(m) {
  const out = []
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return ['The manifest must be a JSON object.']
  if (typeof m.id !== 'string' || !/^[A-Za-z0-9_-]+$/.test(m.id)) out.push('id must match [A-Za-z0-9_-]+')
  if (typeof m.name !== 'string' || m.name.trim() === '') out.push('name must not be blank')
  if (m.version !== undefined && (!Number.isInteger(m.version) || m.version < 0))
    out.push('version must be an integer >= 0 (0 for a new workflow)')
  const nodes = Array.isArray(m.nodes) ? m.nodes : (out.push('nodes must be an array'), [])
  const ids = new Set()
  nodes.forEach((n, i) => {
    if (typeof n?.id !== 'string' || !/^[A-Za-z0-9_-]+$/.test(n.id))
      out.push(`nodes[${i}].id must match [A-Za-z0-9_-]+`)
    else if (ids.has(n.id)) out.push(`nodes[${i}].id '${n.id}' is used twice`)
    else ids.add(n.id)
    if (!TYPES.includes(n?.type)) out.push(`nodes[${i}].type must be one of ${TYPES.join(', ')}`)
  })
  const edges = Array.isArray(m.edges) ? m.edges : (out.push('edges must be an array'), [])
  edges.forEach((e, i) => {
    if (!ids.has(e?.from)) out.push(`edges[${i}].from '${e?.from}' is not a node`)
    if (!ids.has(e?.to)) out.push(`edges[${i}].to '${e?.to}' is not a node`)
    if (e?.from === e?.to) out.push(`edges[${i}] joins a node to itself`)
  })
  return out
}

function parse() {
  try {
    return { manifest: JSON.parse(editor.value) }
  } catch (err) {
    return { error: `Not valid JSON: ${err.message}` }
  }
}

function check() {
  const { manifest, error } = parse()
  const found = error !== undefined ? [error] : problems(manifest)
  messages.replaceChildren(...found.map((p) => el('p', { class: 'error' }, p)))
  editor.setAttribute('aria-invalid', String(found.length > 0))
  if (error === undefined && Array.isArray(manifest?.nodes)) {
    const nodes = manifest.nodes
      .filter((n) => typeof n?.id === 'string')
      .map((n) => ({ id: n.id, label: n.label ?? n.id, kind: n.type }))
    const edges = (Array.isArray(manifest.edges) ? manifest.edges : []).map((e) => ({
      from: e?.from,
      to: e?.to,
      label: e?.condition ?? ''
    }))
    preview.replaceChildren(
      nodes.length === 0
        ? el('p', { class: 'empty' }, 'No nodes yet.')
        : graph(nodes, edges, `Graph of ${manifest.name ?? manifest.id}`)
    )
  }
  return found.length === 0 ? manifest : undefined
}

function load(m) {
  editor.value = JSON.stringify(m, null, 2)
  check()
}

async function open(id) {
  try {
    load(await admin(`/workflow/${encodeURIComponent(id)}`))
  } catch (err) {
    messages.replaceChildren(errorBox(err))
  }
}

async function save() {
  // a pending as-you-type check would wipe the server's answer shown below
  clearTimeout(timer)
  const manifest = check()
  if (manifest === undefined) return
  try {
    // the editor holds the stored version; a save asks for the next one
    const saved = await admin('/workflow', {
      method: 'POST',
      body: { ...manifest, version: (manifest.version ?? 0) + 1 }
    })
    load({ ...manifest, version: saved.version, updatedAt: saved.updatedAt })
    messages.replaceChildren(el('p', { class: 'ok', role: 'status' }, `Saved ${saved.id} at version ${saved.version}.`))
    await refresh()
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      const stored = err.body?.storedVersion
      messages.replaceChildren(
        el(
          'div',
          { class: 'conflict', role: 'alert' },
          el(
            'p',
            {},
            `Version conflict: this workflow was saved by someone else since you loaded it. You edited version ${manifest.version ?? 0}; the stored version is ${stored}.`
          ),
          el('button', { type: 'button', on: { click: () => open(manifest.id) } }, `Load stored version ${stored}`)
        )
      )
    } else messages.replaceChildren(errorBox(err))
  }
}

async function remove() {
  const { manifest } = parse()
  const id = manifest?.id
  if (typeof id !== 'string' || !confirm(`Delete workflow ${id}?`)) return
  try {
    await admin(`/workflow/${encodeURIComponent(id)}`, { method: 'DELETE' })
    messages.replaceChildren(el('p', { class: 'ok', role: 'status' }, `Deleted ${id}.`))
    await refresh()
  } catch (err) {
    messages.replaceChildren(errorBox(err))
  }
}

async function refresh() {
  try {
    const rows = await admin('/workflow')
    list.replaceChildren(
      table(
        [
          {
            label: 'Name',
            value: (w) => el('button', { type: 'button', class: 'link', on: { click: () => open(w.id) } }, w.name)
          },
          { label: 'Id', value: (w) => w.id },
          { label: 'Version', value: (w) => w.version },
          { label: 'Nodes', value: (w) => (w.nodes ?? []).length }
        ],
        rows,
        'No workflows yet: edit the template and save.'
      )
    )
  } catch (err) {
    list.replaceChildren(errorBox(err))
  }
}

editor.addEventListener('input', () => {
  clearTimeout(timer)
  timer = setTimeout(check, 150)
})
document.getElementById('wf-save').addEventListener('click', () => void save())
document.getElementById('wf-delete').addEventListener('click', () => void remove())
document.getElementById('wf-new').addEventListener('click', () => load(TEMPLATE))
function start(e) {
  e.preventDefault()
  const id = parse().manifest?.id
  if (typeof id === 'string') void run(id, document.getElementById('wf-input').value)
}

document.getElementById('wf-run').addEventListener('submit', start)
load(TEMPLATE)
void refresh()
void coordinators()
void approvals()
void recent()
