// Evals: pass rate per baseline with a sparkline of its recent runs, and the recent runs with their
// verdict, judge model, agent version and the judge's raw response behind a disclosure.
import { el, admin, table, badge, tokenField, errorBox, time } from './api.js'

const NS = 'http://www.w3.org/2000/svg'

/** Recent runs oldest to newest as bars: full height passed, short failed. */
function trend(runs) {
  const w = 8
  const s = document.createElementNS(NS, 'svg')
  const n = Math.min(runs.length, 20)
  s.setAttribute('viewBox', `0 0 ${n * w} 20`)
  s.setAttribute('width', String(n * w))
  s.setAttribute('height', '20')
  s.setAttribute('class', 'trend')
  const t = document.createElementNS(NS, 'title')
  t.textContent = `Last ${n} runs, oldest first`
  s.append(t)
  runs
    .slice(0, n)
    .reverse()
    .forEach((r, i) => {
      const b = document.createElementNS(NS, 'rect')
      const h = r.passed ? 18 : 6
      b.setAttribute('x', String(i * w + 1))
      b.setAttribute('y', String(20 - h))
      b.setAttribute('width', String(w - 2))
      b.setAttribute('height', String(h))
      b.setAttribute('class', r.passed ? 'pass' : 'fail')
      s.append(b)
    })
  return s
}

async function refresh() {
  const baselines = document.getElementById('baselines')
  const runsBox = document.getElementById('runs')
  try {
    // runs hold prompts and raw judge responses (a content read): without a token the pass rates
    // still show, and the runs box says why it is empty
    const [summary, runsOrError] = await Promise.all([
      admin('/evals/baselines'),
      admin('/evals/runs?limit=100').catch((err) => err)
    ])
    const runs = runsOrError instanceof Error ? [] : runsOrError
    const byBaseline = new Map()
    for (const r of runs) byBaseline.set(r.baseline, [...(byBaseline.get(r.baseline) ?? []), r])
    baselines.replaceChildren(
      table(
        [
          { label: 'Baseline', value: (b) => b.baseline },
          {
            label: 'Pass rate',
            value: (b) => el('strong', { class: b.passRate >= 0.8 ? 'ok' : 'bad' }, `${Math.round(b.passRate * 100)}%`)
          },
          { label: 'Runs', value: (b) => `${b.passed}/${b.total}` },
          { label: 'Trend', value: (b) => trend(byBaseline.get(b.baseline) ?? []) },
          { label: 'Last run', value: (b) => `${new Date(b.lastRunAt).toLocaleString()} ` },
          { label: 'Last verdict', value: (b) => badge(b.lastVerdict ? 'pass' : 'fail', b.lastVerdict ? 'ok' : 'bad') }
        ],
        summary,
        'No eval runs recorded yet: CI posts them to /api/admin/evals/runs.'
      )
    )
    runsBox.replaceChildren(
      table(
        [
          { label: 'Time', value: (r) => `${new Date(r.timestamp).toLocaleDateString()} ${time(r.timestamp)}` },
          { label: 'Baseline', value: (r) => r.baseline },
          { label: 'Verdict', value: (r) => badge(r.passed ? 'pass' : 'fail', r.passed ? 'ok' : 'bad') },
          { label: 'Judge model', value: (r) => r.judgeModel },
          { label: 'Agent version', value: (r) => r.agentVersion },
          {
            label: 'Judge response',
            value: (r) => el('details', {}, el('summary', {}, 'raw'), el('pre', {}, r.judgeResponse))
          }
        ],
        runs,
        'No runs.'
      )
    )
    if (runsOrError instanceof Error) runsBox.replaceChildren(errorBox(runsOrError))
  } catch (err) {
    baselines.replaceChildren(errorBox(err))
    runsBox.replaceChildren()
  }
}

document.getElementById('token-slot').append(tokenField(() => void refresh()))
void refresh()
