// Interactions: the token's interactions and one interaction's step timeline, replayed and then
// followed on the live stream.
import { el, api, table, badge, errorBox, time, text, token, ApiError } from './api.js'

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
    const out = el('div')
    const remove = el(
      'button',
      { type: 'button', class: 'danger', on: { click: () => void deleteInteraction(it.id, out) } },
      'Delete'
    )
    box.replaceChildren(
      el('h3', {}, `Interaction ${it.id}`),
      status,
      el('div', { class: 'toolbar' }, remove),
      out,
      list
    )
    follow(id, list, status)
  } catch (err) {
    box.replaceChildren(errorBox(err))
  }
}

async function deleteInteraction(id, out) {
  if (!confirm(`Delete interaction ${id} and its steps?`)) return
  try {
    await api(`/api/interactions/${encodeURIComponent(id)}`, { method: 'DELETE' })
    following?.close()
    document.dispatchEvent(new Event('console-refresh'))
  } catch (err) {
    out.replaceChildren(errorBox(err))
  }
}

export const interactionsTab = {
  id: 'interactions',
  label: 'Interactions',
  // holds what a link asked to open (`#interactions?id=…`, from the playground)
  create() {
    return { params: undefined }
  },
  async render(state) {
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
      // without a token the list is the anonymous caller's, which owns nothing: say so, not "none yet"
      token() === ''
        ? 'No token given: interactions are listed per token. Paste one in the token field at the top.'
        : 'No interactions for this token yet.'
    )
    const asked = state.params?.get('id')
    state.params = undefined
    if (asked) await openInteraction(asked, detail)
    return [el('section', { class: 'card' }, el('h2', {}, 'Interactions'), list), detail]
  }
}
