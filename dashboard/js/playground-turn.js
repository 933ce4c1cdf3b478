// One playground turn as it happens: the frames of the agent endpoint (or the steps of a recorded
// interaction) as rows, text pieces growing one row, and once it ends the links to what the
// platform kept of it: its interaction, its policy decisions, its coordinations in the journal.
import { el, admin, badge, errorBox, text, time } from './api.js'

const DECISIONS_READ = 500

function args(v) {
  if (v === null || v === undefined) return ''
  if (typeof v !== 'object') return String(v)
  return Object.entries(v)
    .map(([k, x]) => `${k}=${text(x)}`)
    .join(' ')
}

function usageText(u) {
  if (u === null || typeof u !== 'object') return ''
  return `${u.input ?? 0} in · ${u.output ?? 0} out · ${u.total ?? 0} tokens` + (u.model ? ` · ${u.model}` : '')
}

function decisionKey(d) {
  return `${d.timestamp}|${d.policy_name}|${d.context_snapshot?.phase}|${d.decision}`
}

export class PlaygroundTurn {
  /**
   * `how` is 'endpoint' (the agent's WebSocket) or 'interaction' (recorded, then streamed);
   * `seen` the decisions already shown for this session or conversation (a Set the tab keeps).
   */
  constructor(agent, message, how, seen) {
    this.agent = agent
    this.how = how
    this.seen = seen
    this.ended = false
    this.sessionId = undefined
    this.interaction = undefined
    this.conversationId = undefined
    this.coordinations = new Set()
    this.text = undefined
    this.rows = el('ol', { class: 'timeline frames', 'aria-live': 'polite' })
    this.links = el('div', { class: 'turn-links' })
    this.status = el('span', { class: 'muted' }, 'running…')
    this.box = el(
      'li',
      { class: 'card turn', 'data-agent': agent },
      el(
        'p',
        { class: 'prompt' },
        badge(agent),
        el('span', { class: 'what' }, message),
        ' ',
        el('span', { class: 'muted' }, how === 'interaction' ? 'recorded as an interaction' : 'agent endpoint'),
        ' ',
        this.status
      ),
      this.rows,
      this.links
    )
  }

  row(kind, what, cls = '') {
    this.text = undefined
    const li = el(
      'li',
      { class: `step ${cls}`, 'data-kind': kind },
      badge(kind, cls),
      el('span', { class: 'what' }, what)
    )
    this.rows.append(li)
    return li
  }

  /** Text pieces of one stretch of the answer go into one row, extended as they come. */
  say(piece) {
    if (this.text === undefined) {
      this.row('text', '')
      this.text = this.rows.lastElementChild.querySelector('.what')
    }
    this.text.textContent += piece
  }

  /** A frame of the agent endpoint; true when it ended the turn. */
  frame(f) {
    if (f.type === 'metadata') {
      if (f.key === 'model') this.row('model', text(f.value))
      else if (f.key === 'ai.governance.feedback.lines') this.row('guidance', (f.value ?? []).join(' · '))
      return false
    }
    if (f.type === 'error') {
      this.row('error', text(f.data), 'bad')
      return this.end('error', 'bad')
    }
    const d = f.data ?? {}
    switch (f.event) {
      case 'text-delta':
        this.say(d.text ?? '')
        return false
      case 'tool-start':
        this.row('tool call', `${d.toolName} ${args(d.arguments)}`, 'warn')
        return false
      case 'tool-result':
        this.row('tool result', `${d.toolName}: ${text(d.result)}`, 'ok')
        return false
      case 'tool-error':
        this.row('tool error', `${d.toolName}: ${text(d.error)}`, 'bad')
        return false
      case 'agent-step':
        this.noteStep(d.data)
        this.row('step', `${d.stepName} ${d.description ?? ''}`.trim())
        return false
      case 'complete':
        if (d.usage !== undefined) this.row('usage', usageText(d.usage))
        return this.end('completed', 'ok')
      case 'error':
        // a refusal before any turn started (busy, bad frame): this turn never ran
        this.row('refused', `${d.message} (${d.code})`, 'bad')
        return this.end('refused', 'bad')
      default:
        return false
    }
  }

  /** A step of the recorded interaction, as its live stream sends it; true when it ended the turn. */
  step(s) {
    switch (s.type) {
      case 'text':
        this.say(s.text ?? '')
        return false
      case 'tool-call':
        this.row('tool call', `${s.toolName} ${args(s.data?.arguments)}`, 'warn')
        return false
      case 'tool-result':
        this.row('tool result', `${s.toolName}: ${text(s.data?.result)}`, 'ok')
        return false
      case 'tool-error':
        this.row('tool error', `${s.toolName}: ${s.text ?? ''}`, 'bad')
        return false
      case 'agent-step':
        this.noteStep(s.data?.data)
        this.row('step', `${s.toolName ?? ''} ${s.text ?? ''}`.trim())
        return false
      case 'usage':
        this.row('usage', usageText(s.usage))
        return false
      case 'error':
        this.row('error', s.text ?? '', 'bad')
        return false
      default:
        return false
    }
  }

  /** A coordinator's step names the coordination its dispatches are journalled under. */
  noteStep(data) {
    if (data !== null && typeof data === 'object' && typeof data.coordinationId === 'string')
      this.coordinations.add(data.coordinationId)
  }

  /** A governance decision the admin stream reported for this turn's agent while it ran. */
  decision(e) {
    const cls = e.decision === 'deny' || e.decision === 'error' ? 'bad' : e.decision === 'admit' ? 'ok' : 'warn'
    this.row('decision', `${e.policy}: ${e.decision} (${e.phase})${e.reason ? ` · ${e.reason}` : ''}`, cls)
  }

  /** Marks the end (once) and lays out the links; returns true. */
  end(outcome, cls) {
    if (this.ended) return true
    this.ended = true
    this.status.replaceChildren(badge(outcome, cls))
    void this.showLinks()
    return true
  }

  async showLinks() {
    const go = (hash, label) => el('a', { href: `#${hash}`, class: 'turn-link' }, label)
    const parts = []
    parts.push(
      this.interaction !== undefined
        ? el('p', {}, 'Interaction: ', go(`interactions?id=${encodeURIComponent(this.interaction)}`, this.interaction))
        : el(
            'p',
            { class: 'muted' },
            'Interaction: none (a turn on the agent endpoint is not recorded; tick "Record as an interaction" to keep one).'
          )
    )
    if (this.coordinations.size > 0)
      parts.push(
        el(
          'p',
          {},
          'Journal: ',
          [...this.coordinations].map((id) => go(`journal?coordinationId=${encodeURIComponent(id)}`, id))
        )
      )
    const decisions = el('div', { class: 'turn-decisions' }, el('p', { class: 'muted' }, 'Decisions: reading…'))
    parts.push(decisions)
    this.links.replaceChildren(...parts)
    try {
      decisions.replaceChildren(this.decisionList(await this.readDecisions()))
    } catch (err) {
      decisions.replaceChildren(el('p', {}, 'Decisions: '), errorBox(err))
    }
  }

  /**
   * This turn's entries of the decision log, those no earlier turn of its session or conversation
   * showed (`seen`). On the agent endpoint its session's: its prompt's and its tool calls' alike.
   * A recorded interaction has no session: its prompt's and answer's carry its conversation, and
   * its tool calls' (which carry none) are those of the same agent and user the log holds between
   * them. No clock is compared: the browser's may differ from the server's.
   */
  async readDecisions() {
    const all = await admin(`/governance/decisions?limit=${DECISIONS_READ}`)
    const fresh = (d) => !this.seen.has(decisionKey(d))
    let mine
    if (this.how === 'endpoint') mine = all.filter((d) => d.context_snapshot?.session_id === this.sessionId && fresh(d))
    else {
      const own = (d) => d.context_snapshot?.conversation_id === this.conversationId && fresh(d)
      const first = all.findIndex(own)
      const last = all.findLastIndex(own)
      const user = first < 0 ? undefined : all[first].context_snapshot.user_id
      mine =
        first < 0
          ? []
          : all
              .slice(first, last + 1)
              .filter(
                (d) =>
                  own(d) ||
                  (d.context_snapshot?.action === 'call_tool' &&
                    d.context_snapshot?.agent_id === this.agent &&
                    d.context_snapshot?.user_id === user &&
                    fresh(d))
              )
    }
    for (const d of mine) this.seen.add(decisionKey(d))
    return mine
  }

  decisionList(rows) {
    if (rows.length === 0)
      return el('p', { class: 'muted' }, 'Decisions: none logged for this turn (no policy applies to it).')
    return el(
      'div',
      {},
      el(
        'p',
        {},
        `Decisions (${rows.length}), from the decision log; all of them on `,
        el('a', { href: '#governance' }, 'Governance'),
        ':'
      ),
      el(
        'ul',
        { class: 'decisions' },
        rows
          .slice()
          .reverse()
          .map((d) =>
            el(
              'li',
              { 'data-policy': d.policy_name },
              el('code', {}, d.policy_name),
              ' ',
              badge(d.decision, d.decision === 'admit' ? 'ok' : d.decision === 'deny' ? 'bad' : 'warn'),
              ` ${d.context_snapshot?.phase ?? ''}`,
              typeof d.context_snapshot?.tool_name === 'string' ? ` · tool call ${d.context_snapshot.tool_name}` : '',
              d.reason ? ` · ${d.reason} ` : ' ',
              el('time', { class: 'muted' }, time(d.timestamp))
            )
          )
      )
    )
  }
}
