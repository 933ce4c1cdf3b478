// Running the saved workflow on a coordinator, following the run while it goes, the recent runs,
// and the approvals runs wait for (approve or deny through the write token).
import { el, admin, table, badge, errorBox, time } from './api.js'

const $ = (id) => document.getElementById(id)
const ENDED = new Set(['SUCCEEDED', 'FAILED'])
const KIND = { SUCCEEDED: 'ok', FAILED: 'bad', SKIPPED: '', WAITING_APPROVAL: 'warn', RUNNING: 'warn' }
let watched
let poll

function status(s) {
  return badge(s, KIND[s] ?? '')
}

/** One run: its status, output and a row per node (duration in milliseconds). */
function showRun(run) {
  const waiting = run.pendingApproval
  $('wf-run-result').replaceChildren(
    el(
      'p',
      { role: 'status' },
      `Run ${run.runId.slice(0, 12)} of ${run.workflowId} on ${run.coordinator}: `,
      status(run.status),
      waiting ? ` at ${waiting.arguments.nodeId}: ${waiting.message}` : ''
    ),
    ENDED.has(run.status) ? el('p', {}, 'Output: ', el('code', {}, run.output === '' ? '(empty)' : run.output)) : '',
    table(
      [
        {
          label: 'Node',
          value: (r) => el('span', { title: r.type }, r.nodeId, el('span', { class: 'stream' }, ` ${r.type}`))
        },
        { label: 'Status', value: (r) => status(r.status) },
        { label: 'Output', value: (r) => r.output },
        { label: 'Error', value: (r) => r.error },
        { label: 'ms', value: (r) => Math.round(r.duration) }
      ],
      run.nodeResults,
      'No node has run yet.'
    )
  )
}

/** Shows `runId` and re-reads it every second until it ends (it waits on an approval meanwhile). */
async function follow(runId) {
  watched = runId
  clearTimeout(poll)
  try {
    const run = await admin(`/workflow/runs/${encodeURIComponent(runId)}`)
    if (watched !== runId) return
    showRun(run)
    if (!ENDED.has(run.status)) poll = setTimeout(() => void follow(runId), 1000)
    else await recent()
  } catch (err) {
    $('wf-run-result').replaceChildren(errorBox(err))
  }
}

export async function coordinators() {
  const pick = $('wf-coordinator')
  try {
    const list = await admin('/coordinators')
    const chosen = pick.value
    pick.replaceChildren(
      el('option', { value: '' }, list.length === 1 ? `${list[0].name} (the only one)` : 'choose a coordinator'),
      ...list.map((c) => el('option', { value: c.name }, `${c.name} (${c.availableCount}/${c.agentCount} agents)`))
    )
    pick.value = list.some((c) => c.name === chosen) ? chosen : ''
  } catch (err) {
    $('wf-run-result').replaceChildren(errorBox(err))
  }
}

/** POSTs the run: 200 with the ended run, 202 when it stopped at an approval. */
export async function run(id, input) {
  const coordinator = $('wf-coordinator').value
  const q = coordinator === '' ? '' : `?coordinator=${encodeURIComponent(coordinator)}`
  try {
    const started = await admin(`/workflow/${encodeURIComponent(id)}/run${q}`, { method: 'POST', body: { input } })
    showRun(started)
    if (!ENDED.has(started.status)) void follow(started.runId)
    await Promise.all([approvals(), recent()])
  } catch (err) {
    $('wf-run-result').replaceChildren(errorBox(err))
  }
}

async function decide(a, approve) {
  const { workflowId, nodeId, runId } = a.arguments
  if (!confirm(`${approve ? 'Approve' : 'Deny'} ${nodeId} of ${workflowId}?`)) return
  try {
    await admin(`/workflow/approvals/${encodeURIComponent(a.approvalId)}`, { method: 'POST', body: { approve } })
  } catch (err) {
    $('wf-approvals').prepend(errorBox(err))
    return
  }
  await approvals()
  await follow(runId)
}

export async function approvals() {
  const box = $('wf-approvals')
  try {
    box.replaceChildren(
      table(
        [
          { label: 'Workflow', value: (a) => a.arguments.workflowId },
          { label: 'Node', value: (a) => a.arguments.nodeId },
          { label: 'Message', value: (a) => a.message },
          { label: 'Expires', value: (a) => time(a.expiresAt) },
          {
            label: 'Decision',
            value: (a) =>
              el(
                'span',
                { class: 'inline' },
                el('button', { type: 'button', on: { click: () => decide(a, true) } }, 'Approve'),
                el('button', { type: 'button', class: 'danger', on: { click: () => decide(a, false) } }, 'Deny')
              )
          }
        ],
        await admin('/workflow/approvals'),
        'No approvals pending (they appear when a run reaches an approval node).'
      )
    )
  } catch (err) {
    box.replaceChildren(errorBox(err))
  }
}

export async function recent() {
  const box = $('wf-runs')
  try {
    const runs = await admin('/workflow/runs?limit=10')
    box.replaceChildren(
      table(
        [
          {
            label: 'Run',
            value: (r) =>
              el(
                'button',
                { type: 'button', class: 'link', on: { click: () => follow(r.runId) } },
                r.runId.slice(0, 12)
              )
          },
          { label: 'Workflow', value: (r) => r.workflowId },
          { label: 'Status', value: (r) => status(r.status) },
          { label: 'Started', value: (r) => time(r.startedAt) }
        ],
        runs,
        'No runs yet.'
      )
    )
  } catch (err) {
    box.replaceChildren(errorBox(err))
  }
}
