// Playground: talk to any agent from the browser. A turn goes over the agent's own WebSocket
// endpoint (the frames a client sees), or, ticked, is recorded as an interaction through the
// interactions API and followed on its live stream. Each turn then links to what the platform kept.
import { el, admin, api, errorBox, token, MAKE_TOKEN } from './api.js'
import { PlaygroundTurn } from './playground-turn.js'

function wsUrl(path, query) {
  const q = new URLSearchParams(query)
  if (token() !== '') q.set('access_token', token())
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:'
  const s = q.toString()
  return `${proto}//${location.host}${path}${s === '' ? '' : `?${s}`}`
}

function note() {
  return token() === ''
    ? `No token: a turn on the agent endpoint runs as an anonymous caller (while platform.ai.endpoint.auth is open), and reading its decisions or recording it as an interaction needs one. Paste an API token in the token field at the top (the first start prints a dashboard URL carrying one; ${MAKE_TOKEN} makes another).`
    : 'Turns run as the principal of the token in the field at the top.'
}

export const playgroundTab = {
  id: 'playground',
  label: 'Playground',
  create() {
    const state = {
      paths: new Map(),
      conn: undefined,
      turn: undefined,
      // per agent: the last recorded interaction (the next one continues it) and its decisions shown
      chains: new Map()
    }
    state.agent = el('select', { 'aria-label': 'Agent', id: 'playground-agent' })
    state.record = el('input', { type: 'checkbox', id: 'playground-record' })
    state.message = el('input', {
      type: 'text',
      'aria-label': 'Message',
      placeholder: 'message to the agent',
      class: 'msg wide',
      autocomplete: 'off'
    })
    state.send = el('button', { type: 'submit' }, 'Send')
    state.cancel = el(
      'button',
      { type: 'button', class: 'danger', disabled: true, on: { click: () => cancel(state) } },
      'Cancel'
    )
    state.note = el('p', { class: 'muted' })
    state.problem = el('div', { 'aria-live': 'polite' })
    state.turns = el('ol', { class: 'turns' })
    state.agent.addEventListener('change', () => closeConn(state))
    const form = el(
      'form',
      {
        class: 'toolbar',
        on: {
          submit: (e) => {
            e.preventDefault()
            void send(state)
          }
        }
      },
      state.agent,
      state.message,
      state.send,
      state.cancel,
      el('label', {}, state.record, ' Record as an interaction')
    )
    state.root = el(
      'section',
      { class: 'card playground' },
      el('h2', {}, 'Playground'),
      state.note,
      form,
      state.problem,
      state.turns
    )
    return state
  },
  async render(state) {
    state.note.textContent = note()
    // a token pasted since the connection opened: the next turn connects as its principal
    if (state.conn !== undefined && state.conn.token !== token() && state.turn === undefined) closeConn(state)
    try {
      const agents = await admin('/agents')
      const was = state.agent.value
      state.paths = new Map(agents.map((a) => [a.name, a.path]))
      state.agent.replaceChildren(...agents.map((a) => el('option', { value: a.name }, a.name)))
      if (state.paths.has(was)) state.agent.value = was
      state.problem.replaceChildren()
    } catch (err) {
      state.problem.replaceChildren(errorBox(err))
    }
    return state.root
  },
  events(batch, _panel, state) {
    const turn = state.turn
    if (turn === undefined) return
    for (const e of batch)
      if (e.type === 'GovernanceDecision' && e.agentId === turn.agent && !turn.ended) turn.decision(e)
  }
}

function busy(state, on) {
  state.send.disabled = on
  state.cancel.disabled = !on
}

function finished(state, turn) {
  if (state.turn === turn) {
    state.turn = undefined
    busy(state, false)
  }
}

async function send(state) {
  const message = state.message.value.trim()
  const agent = state.agent.value
  if (message === '' || agent === '' || state.turn !== undefined) return
  state.problem.replaceChildren()
  busy(state, true)
  try {
    if (state.record.checked) await recorded(state, agent, message)
    else await overEndpoint(state, agent, message)
    state.message.value = ''
  } catch (err) {
    state.problem.replaceChildren(errorBox(err))
    busy(state, false)
  }
}

/** The agent's WebSocket, opened once per agent and token; resolves with it once the session greets. */
function connect(state, agent) {
  if (state.conn !== undefined && state.conn.agent === agent) return state.conn.ready
  closeConn(state)
  const path = state.paths.get(agent) ?? `/platform/agent/${encodeURIComponent(agent)}`
  const ws = new WebSocket(wsUrl(path, {}))
  const conn = { agent, ws, token: token(), sessionId: undefined, seen: new Set() }
  state.conn = conn
  conn.ready = new Promise((resolve, reject) => {
    ws.onmessage = (m) => {
      let f
      try {
        f = JSON.parse(m.data)
      } catch {
        return
      }
      if (f.type === 'metadata' && f.key === 'session') {
        conn.sessionId = f.sessionId
        resolve(conn)
        return
      }
      const turn = state.turn
      if (turn !== undefined && turn.how === 'endpoint' && turn.frame(f)) finished(state, turn)
    }
    ws.onclose = (c) => {
      if (state.conn === conn) state.conn = undefined
      // a refused upgrade reaches a page only as 1006 before any frame: say what usually causes it
      reject(
        new Error(
          c.code === 1006 && conn.sessionId === undefined
            ? token() === ''
              ? `The agent endpoint refused the connection: it may require a token (platform.ai.endpoint.auth: required). Paste one in the token field at the top (${MAKE_TOKEN} makes one).`
              : 'The agent endpoint refused the connection: is the token valid, and is this page an admitted origin (platform.server.allowed-origins)?'
            : `The connection closed (${c.code}${c.reason ? `, ${c.reason}` : ''}).`
        )
      )
      const turn = state.turn
      if (turn !== undefined && turn.how === 'endpoint' && !turn.ended) {
        turn.row('closed', `the connection closed (${c.code})`, 'bad')
        turn.end('error', 'bad')
        finished(state, turn)
      }
    }
  })
  return conn.ready
}

function closeConn(state) {
  const conn = state.conn
  state.conn = undefined
  if (conn !== undefined) conn.ws.close()
}

async function overEndpoint(state, agent, message) {
  const conn = await connect(state, agent)
  const turn = new PlaygroundTurn(agent, message, 'endpoint', conn.seen)
  turn.sessionId = conn.sessionId
  state.turn = turn
  state.turns.prepend(turn.box)
  conn.ws.send(JSON.stringify({ message }))
}

/** A background interaction (continuing this agent's last one), then its live stream. */
async function recorded(state, agent, message) {
  const chain = state.chains.get(agent)
  const body = { message, agentId: agent, background: true }
  if (chain !== undefined) body.previousInteractionId = chain.id
  const it = await api('/api/interactions', { method: 'POST', body })
  const seen = chain?.seen ?? new Set()
  state.chains.set(agent, { id: it.id, seen })
  const turn = new PlaygroundTurn(agent, message, 'interaction', seen)
  turn.interaction = it.id
  turn.conversationId = it.conversationId
  state.turn = turn
  state.turns.prepend(turn.box)
  const ws = new WebSocket(wsUrl('/platform/interactions-stream', { id: it.id }))
  turn.stream = ws
  const shown = new Set()
  ws.onmessage = (m) => {
    const f = JSON.parse(m.data)
    if (f.type === 'interaction-step' && !shown.has(f.step.seq)) {
      shown.add(f.step.seq)
      turn.step(f.step)
    } else if (f.type === 'interaction-terminal') {
      turn.end(f.status.toLowerCase(), f.status === 'COMPLETED' ? 'ok' : 'bad')
      finished(state, turn)
    }
  }
  ws.onclose = () => {
    if (turn.ended) return
    turn.row('closed', 'the live stream closed before the interaction ended', 'bad')
    turn.end('unknown', 'bad')
    finished(state, turn)
  }
}

async function cancel(state) {
  const turn = state.turn
  if (turn === undefined) return
  try {
    if (turn.how === 'endpoint') state.conn?.ws.send('{"type":"cancel"}')
    else await api(`/api/interactions/${encodeURIComponent(turn.interaction)}/cancel`, { method: 'POST' })
  } catch (err) {
    state.problem.replaceChildren(errorBox(err))
  }
}
