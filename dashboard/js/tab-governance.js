// Governance: the kill switch, policies, the decision log, the OWASP matrix, commitments (checked in the browser).
import { el, admin, table, badge, section, errorBox, time } from './api.js'
import { decisionViewer } from './decision-viewer.js'
import { commitmentsView } from './commitments.js'

function killSwitch(health, out, reason) {
  const ks = health.killSwitch ?? { armed: false }
  const act = async (e) => {
    e.preventDefault()
    const arming = !ks.armed
    if (arming && reason.value.trim() === '') return
    if (
      !confirm(
        arming
          ? `Arm the kill switch? Every agent call will be denied.\nReason: ${reason.value}`
          : 'Disarm the kill switch?'
      )
    )
      return
    try {
      await admin(`/governance/kill-switch/${arming ? 'arm' : 'disarm'}`, {
        method: 'POST',
        body: arming ? { reason: reason.value.trim() } : {}
      })
      out.replaceChildren()
      reason.value = ''
      // the console redraws the open tab (the form may have been redrawn meanwhile)
      document.dispatchEvent(new Event('console-refresh'))
    } catch (err) {
      out.replaceChildren(errorBox(err))
    }
  }
  return el(
    'form',
    { class: 'toolbar', on: { submit: act } },
    el('span', {}, 'State:'),
    badge(ks.armed ? 'ARMED' : 'disarmed', ks.armed ? 'bad' : 'ok'),
    ks.armed
      ? el(
          'span',
          {},
          // why and by whom is a content read: without a token only the time shows
          ks.reason !== undefined
            ? `${ks.reason} (by ${ks.operator ?? '?'}, ${time(ks.armedAt)})`
            : `since ${time(ks.armedAt)} (a token shows why and by whom)`
        )
      : reason,
    el('button', { type: 'submit', class: ks.armed ? '' : 'danger' }, ks.armed ? 'Disarm' : 'Arm')
  )
}

export const governanceTab = {
  id: 'governance',
  label: 'Governance',
  refreshOn: ['ControlActionExecuted'],
  // the decision viewer lives as long as the page and follows the stream even while hidden
  // so are the kill switch's message box and reason field: a refusal stays shown, and a reason
  // being typed stays, when an event redraws the tab
  create() {
    return {
      viewer: decisionViewer(),
      out: el('div', { 'aria-live': 'polite' }),
      reason: el('input', {
        type: 'text',
        'aria-label': 'Reason',
        placeholder: 'reason (required to arm)',
        required: true
      })
    }
  },
  events(batch, _panel, state) {
    state.viewer.events(batch)
  },
  keep({ viewer }) {
    return viewer.holdScroll()
  },
  async render({ viewer, out, reason }) {
    const health = await admin('/governance/health').catch((err) => err)
    const rest = [
      await section('Policies', async () =>
        table(
          [
            { label: 'Name', value: (p) => p.name },
            { label: 'Source', value: (p) => p.source },
            { label: 'Version', value: (p) => p.version },
            { label: 'Digest', value: (p) => el('code', {}, String(p.digest ?? '').slice(0, 19)) }
          ],
          await admin('/governance/policies'),
          'No policies loaded.'
        )
      ),
      await viewer.load().then(() => viewer.element),
      await section('OWASP agentic top 10', async () => {
        const m = await admin('/governance/owasp')
        return table(
          [
            { label: 'Id', value: (r) => r.id },
            { label: 'Risk', value: (r) => r.title },
            {
              label: 'Coverage',
              value: (r) =>
                badge(
                  r.coverage,
                  r.coverage === 'COVERED' || r.coverage === 'FULL' ? 'ok' : r.coverage === 'PARTIAL' ? 'warn' : 'bad'
                )
            },
            { label: 'Notes', value: (r) => r.notes }
          ],
          m.rows
        )
      }),
      await section('Commitments', async () =>
        commitmentsView(await admin('/governance/commitments?limit=100'), await admin('/governance/commitments/keys'))
      )
    ]
    // the message box and the reason field are the page's own nodes: a node has one parent, so
    // they move into the new drawing only once nothing is left to wait for, or a redraw would take
    // a refusal (or a reason being typed) off the screen until it ends
    const ks = el(
      'section',
      { class: 'card' },
      el('h2', {}, 'Kill switch'),
      out,
      health instanceof Error ? errorBox(health) : killSwitch(health, out, reason)
    )
    return [ks, ...rest]
  }
}
