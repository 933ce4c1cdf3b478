// Governance: the kill switch, policies, the decision log, the OWASP matrix, commitments (checked in the browser).
import { el, admin, table, badge, section, errorBox, time } from './api.js'
import { commitmentsView } from './commitments.js'

function killSwitch(health, out) {
  const ks = health.killSwitch ?? { armed: false }
  const reason = el('input', {
    type: 'text',
    'aria-label': 'Reason',
    placeholder: 'reason (required to arm)',
    required: true
  })
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
    ks.armed ? el('span', {}, `${ks.reason ?? ''} (by ${ks.operator ?? '?'}, ${time(ks.armedAt)})`) : reason,
    el('button', { type: 'submit', class: ks.armed ? '' : 'danger' }, ks.armed ? 'Disarm' : 'Arm')
  )
}

function decisions(rows) {
  const byDecision = el(
    'select',
    { 'aria-label': 'Filter by decision' },
    ['', ...new Set(rows.map((r) => r.decision).filter(Boolean))].map((d) =>
      el('option', { value: d }, d === '' ? 'All decisions' : d)
    )
  )
  const byPolicy = el('input', { type: 'text', 'aria-label': 'Filter by policy', placeholder: 'policy' })
  const box = el('div')
  const paint = () => {
    const d = byDecision.value
    const p = byPolicy.value.trim()
    const shown = rows.filter(
      (r) => (d === '' || r.decision === d) && (p === '' || String(r.matched_policy ?? r.policy ?? '').includes(p))
    )
    box.replaceChildren(
      table(
        [
          { label: 'Time', value: (r) => time(r.timestamp) },
          { label: 'Decision', value: (r) => badge(r.decision, r.decision === 'deny' ? 'bad' : 'ok') },
          { label: 'Policy', value: (r) => r.matched_policy ?? r.policy ?? '' },
          { label: 'Agent', value: (r) => r.agent_id ?? r.agentId ?? '' },
          { label: 'Reason', value: (r) => r.reason ?? '' }
        ],
        shown,
        rows.length === 0 ? 'No decisions recorded yet.' : 'No decisions match the filter.'
      )
    )
  }
  byDecision.addEventListener('change', paint)
  byPolicy.addEventListener('input', paint)
  paint()
  return el('div', {}, el('div', { class: 'toolbar' }, byDecision, byPolicy), box)
}

export const governanceTab = {
  id: 'governance',
  label: 'Governance',
  refreshOn: ['ControlActionExecuted'],
  async render() {
    const out = el('div', { 'aria-live': 'polite' })
    const health = await admin('/governance/health').catch((err) => err)
    const ks = el(
      'section',
      { class: 'card' },
      el('h2', {}, 'Kill switch'),
      out,
      health instanceof Error ? errorBox(health) : killSwitch(health, out)
    )
    return [
      ks,
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
      await section('Decisions', async () => decisions(await admin('/governance/decisions?limit=200'))),
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
  }
}
