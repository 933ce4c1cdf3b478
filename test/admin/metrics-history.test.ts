// The metrics history: per-minute buckets over the last hour, percentiles from a bounded histogram,
// gauges carried over quiet minutes, old minutes forgotten, and the route through the read gate.
import t from 'tap'
import { MetricsHistoryRecorder, HISTORY_MINUTES } from '../../runtime/admin/metrics-history.js'
import type { PlatformEvent } from '../../runtime/events/index.js'
import { governedAdminPlatform } from './helpers.js'

const MIN = 60_000
const turn = (agentName: string, duration: number, outcome = 'completed', tokens = 10) =>
  ({
    type: 'TurnCompleted',
    timestamp: '',
    agentName,
    duration,
    outcome,
    inputTokens: tokens / 2,
    outputTokens: tokens / 2
  }) as PlatformEvent<'TurnCompleted'>

t.test(
  'a minute holds its turns, failures, tokens and latency percentiles; quiet minutes carry the gauges',
  async (t) => {
    let now = 1_000 * MIN + 30_000
    const gauges = { connections: 3, sessions: 1 }
    const h = new MetricsHistoryRecorder(
      () => gauges,
      () => now
    )
    h.sample()
    for (let i = 1; i <= 100; i++) h.turn(turn('demo', i * 10))
    h.turn(turn('critic', 5, 'denied'))
    h.turn(turn('critic', 5, 'error'))
    let read = h.read()
    t.equal(read.points.length, HISTORY_MINUTES)
    let last = read.points.at(-1)!
    t.match(last, { turns: 102, errors: 1, denials: 1, connections: 3, sessions: 1 })
    t.equal(last.t, new Date(1_000 * MIN).toISOString())
    t.equal(last.tokensPerSecond, Math.round((1020 / 30) * 100) / 100, 'divided by the seconds the minute has had')
    // the histogram's buckets grow by 15%: a percentile is within that of the exact value
    t.ok(last.p50! >= 480 && last.p50! <= 480 * 1.16, `p50 ${last.p50}`)
    t.ok(last.p95! >= 950 && last.p95! <= 950 * 1.16, `p95 ${last.p95}`)
    t.match(read.agents, { demo: { turns: 100, errors: 0 }, critic: { turns: 2, errors: 2 } })

    now += 5 * MIN
    gauges.connections = 7
    read = h.read()
    last = read.points.at(-1)!
    t.match(last, { turns: 0, p50: null, p95: null, connections: 7 })
    t.match(read.points.at(-2), { turns: 0, connections: 3 }, 'a quiet minute carries the last reading')
    t.match(read.points.at(-6), { turns: 102 }, 'five minutes ago')

    now += HISTORY_MINUTES * MIN
    read = h.read()
    t.equal(
      read.points.reduce((n, p) => n + p.turns, 0),
      0,
      'an hour later the window holds none of it'
    )
    t.match(read.agents.demo, { turns: 100 }, 'the per-agent totals are since start-up')
  }
)

t.test('GET /api/admin/metrics/history counts real turns and denials', async (t) => {
  const tp = await governedAdminPlatform()
  t.teardown(tp.close)
  for (const message of ['good morning', 'good evening', 'the launch codes please']) {
    const r = await fetch(`${tp.url}/platform/agent/demo`, { method: 'POST', body: message })
    await r.text()
  }
  const res = await fetch(`${tp.url}/api/admin/metrics/history`)
  t.equal(res.status, 200)
  const body = (await res.json()) as {
    minutes: number
    points: { turns: number; p95: number | null; denials: number; errors: number }[]
    agents: Record<string, { turns: number }>
  }
  t.equal(body.minutes, 60)
  t.equal(
    body.points.reduce((n, p) => n + p.turns, 0),
    3
  )
  t.ok(body.points.at(-1)!.p95 !== null)
  t.match(body.points.at(-1), { denials: 1, errors: 0 }, 'the policy denial counts as one')
  t.match(body.agents, { demo: { turns: 3, errors: 1 } })
})
