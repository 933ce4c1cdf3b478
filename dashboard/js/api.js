// Shared by every page: the token, REST calls that explain 401/403, and DOM built with textContent only.
const TOKEN_KEY = 'platform.admin.token'

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? ''
}

export function setToken(value) {
  if (value === '') sessionStorage.removeItem(TOKEN_KEY)
  else sessionStorage.setItem(TOKEN_KEY, value)
}

// The URL the first start prints carries a token in its fragment (never sent to the server): kept
// as a pasted one is, then taken out of the address bar, the history entry and any later bookmark.
// This runs when the module loads, before a page reads the fragment as its tab.
if (location.hash.startsWith('#token=')) {
  let value = ''
  try {
    value = decodeURIComponent(location.hash.slice('#token='.length)).trim()
  } catch {
    /* a malformed fragment: no token */
  }
  if (value !== '') setToken(value)
  history.replaceState(null, '', location.pathname + location.search)
}

export class ApiError extends Error {
  constructor(status, body) {
    super(explain(status, body))
    this.status = status
    this.body = body
  }
}

/** The command that makes a token, as the refusal messages and the playground say it. */
export const MAKE_TOKEN = 'node bin/platform.js token create --principal you --role admin'

// Refusals whose cause the status alone does not tell: a 403 is a switched-off surface as often as
// a missing role, and no token means something else than a rejected one. Keyed by the body's code.
const CAUSES = {
  PLT_ERR_ADMIN_WRITE_DISABLED: () =>
    'Admin writes are turned off on this platform, whatever the token: start it with platform.admin.http-write-enabled: true (platform.yaml, PLATFORM_ADMIN_HTTP_WRITE_ENABLED=true or --set)',
  PLT_ERR_INTERACTIONS_WRITE_DISABLED: () =>
    'Interaction writes are turned off on this platform, whatever the token: start it with platform.interactions.http-write-enabled: true (platform.yaml, PLATFORM_INTERACTIONS_HTTP_WRITE_ENABLED=true or --set)',
  PLT_ERR_ADMIN_ROLE_REQUIRED: () =>
    `Your token is valid but lacks the role this needs: use a token with that role (${MAKE_TOKEN} makes one)`,
  PLT_ERR_ADMIN_FORBIDDEN: () => "Your token is valid but the platform's authorizer does not allow it this action"
}

/** What a person should do about a refusal, in words, with the server's own code. */
export function explain(status, body) {
  const code = body && typeof body.code === 'string' ? body.code : undefined
  const said = body && typeof body.error === 'string' ? `${body.error} (${code})` : `HTTP ${status}`
  const cause = code === undefined ? undefined : CAUSES[code]
  if (cause !== undefined) return `${cause()}. (${code})`
  if (status === 401)
    return token() === ''
      ? `No token: this needs one. Paste an API token in the token field at the top (the first start prints a dashboard URL carrying one; ${MAKE_TOKEN} makes another). (${code ?? 'HTTP 401'})`
      : `The token in the field at the top was not accepted (unknown, mistyped or no longer configured): paste a valid one. (${code ?? 'HTTP 401'})`
  if (status === 403) return `Forbidden: ${said}` + (body && typeof body.hint === 'string' ? `: ${body.hint}` : '')
  return said + (body && typeof body.hint === 'string' ? `: ${body.hint}` : '')
}

/** A JSON call with the token on it; a non-2xx answer throws ApiError. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = {}
  const t = token()
  if (t !== '') headers.authorization = `Bearer ${t}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  let data
  try {
    data = text === '' ? undefined : JSON.parse(text)
  } catch {
    data = text
  }
  if (!res.ok) throw new ApiError(res.status, data)
  return data
}

export const admin = (path, opts) => api('/api/admin' + path, opts)

/**
 * el('td', {class: 'x', title: t}, child...) — children are nodes or text (set as text, never parsed),
 * attributes never `on*` (listeners go in `on`).
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k === 'on') for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn)
    else if (k.startsWith('on')) throw new Error('listeners go in attrs.on')
    else node.setAttribute(k, v === true ? '' : String(v))
  }
  append(node, children)
  return node
}

function append(node, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue
    node.append(c instanceof Node ? c : document.createTextNode(String(c)))
  }
}

export function text(v) {
  if (v === undefined || v === null) return ''
  return typeof v === 'object' ? JSON.stringify(v) : String(v)
}

/** A scrolling table with a header row of `headers` over `body` (a tbody the caller may keep filling). */
export function scrollTable(headers, body, className = 'scroll') {
  return el(
    'div',
    { class: className },
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          headers.map((h) => el('th', { scope: 'col' }, h))
        )
      ),
      body
    )
  )
}

// Rows of a fleet-sized table drawn in its first frame, more than a tall screen shows: laying out
// 200 rows of eight cells took about 100 ms of the main thread in that one frame.
const FIRST_FRAME_ROWS = 50

/**
 * A table of `rows` with `cols` [{label, value(row) → text or node}]; an empty state when no rows.
 * With `first`, only that many rows are drawn at once (a screenful in the first frame, the rest of
 * them in the frame after) and a button draws the rest, a chunk per animation frame: a fleet of a
 * thousand agents must not hold up the page's first paint.
 */
export function table(cols, rows, empty = 'Nothing here yet.', first = Infinity) {
  if (!Array.isArray(rows) || rows.length === 0) return el('p', { class: 'empty' }, empty)
  const row = (r) =>
    el(
      'tr',
      {},
      cols.map((c) => {
        const v = c.value(r)
        return el('td', {}, v instanceof Node ? v : text(v))
      })
    )
  let drawn = Number.isFinite(first) ? Math.min(first, FIRST_FRAME_ROWS, rows.length) : rows.length
  const body = el('tbody', {}, rows.slice(0, drawn).map(row))
  // rows in order up to the `n`th, whichever of that later frame and "Show all" asks first
  const drawUpTo = (n) => {
    if (n <= drawn) return
    body.append(...rows.slice(drawn, n).map(row))
    drawn = Math.min(n, rows.length)
  }
  if (drawn < Math.min(first, rows.length)) void frameAfterNext().then(() => drawUpTo(first))
  const out = scrollTable(
    cols.map((c) => c.label),
    body
  )
  if (rows.length <= first) return out
  const more = el(
    'button',
    {
      type: 'button',
      class: 'more',
      on: {
        click: () => {
          more.disabled = true
          const chunk = () => {
            drawUpTo(Math.max(drawn, first) + first)
            more.textContent = `Drawing… ${drawn} of ${rows.length}`
            if (drawn < rows.length) requestAnimationFrame(chunk)
            else more.remove()
          }
          requestAnimationFrame(chunk)
        }
      }
    },
    `Show all ${rows.length} (${rows.length - first} more)`
  )
  return el('div', {}, out, more)
}

export function badge(label, kind = '') {
  return el('span', { class: `badge ${kind}` }, label)
}

export function errorBox(err) {
  return el('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err))
}

/**
 * Resolves at the start of the frame after the next one, so that what is done then is drawn in a
 * frame of its own, after the one that shows what the page already holds. A tab in the background
 * gets no frames: a timer resolves it there.
 */
export function frameAfterNext() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 1000)
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        clearTimeout(timer)
        resolve()
      })
    )
  })
}

/** A section with a heading whose body is filled by `load()`; a failure is shown in its place. */
export async function section(title, load) {
  const box = el('section', { class: 'card' }, el('h2', {}, title))
  try {
    box.append(await load())
  } catch (err) {
    box.append(errorBox(err))
  }
  return box
}

/** The token field every page carries in its header. */
export function tokenField(onChange) {
  const input = el('input', {
    type: 'password',
    id: 'token',
    placeholder: 'API token',
    autocomplete: 'off',
    'aria-label': 'API token'
  })
  input.value = token()
  const save = el('button', { type: 'submit' }, 'Use token')
  return el(
    'form',
    {
      class: 'token',
      on: {
        submit: (e) => {
          e.preventDefault()
          setToken(input.value.trim())
          onChange()
        }
      }
    },
    input,
    save
  )
}

export function time(iso) {
  if (typeof iso !== 'string' && typeof iso !== 'number') return ''
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString()
}
