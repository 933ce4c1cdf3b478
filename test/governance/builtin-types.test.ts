import t from 'tap'
import {
  ConcurrencyLimitPolicy,
  CostCeilingPolicy,
  KillSwitchPolicy,
  RateLimitPolicy,
  TimeWindowPolicy,
  timeWindowFactory,
  TOOL_ARGS_BUDGET
} from '../../runtime/governance/types/index.js'
import { InProcessCounters } from '../../runtime/store/index.js'
import { md, parser, post, pre, synchronous } from '../helpers/governance.js'

const build = (type: string, config: unknown, name = 'p') =>
  synchronous(
    parser().parse(
      'yaml:b.yaml',
      `policies:\n  - name: ${name}\n    type: ${type}\n    config: ${JSON.stringify(config)}\n`
    )[0]!
  )
const buildErr = (type: string, config: unknown) => {
  try {
    build(type, config)
    return ''
  } catch (e) {
    return (e as Error).message.replace("failed to build policies[0] ('p') in yaml:b.yaml: ", '')
  }
}

t.test('deny-list: request, response and tool-argument reasons; case-insensitive phrases and regex', async (t) => {
  const p = build('deny-list', { phrases: ['DROP TABLE'], regex: ['rm\\s+-rf'] })
  t.same(p.evaluate(pre('please drop table users')), {
    decision: 'deny',
    reason: 'deny-list: request matched a denied phrase'
  })
  t.same(p.evaluate(pre('RM   -RF /')), { decision: 'deny', reason: 'deny-list: request matched a denied phrase' })
  t.same(p.evaluate(post('then Drop Table x')), {
    decision: 'deny',
    reason: 'deny-list: response matched a denied phrase'
  })
  t.same(p.evaluate(pre('fine')), { decision: 'admit' })
  t.same(p.evaluate(md({ tool_args: { sql: ['select 1', { nested: 'drop table t' }] } }, 'call_tool:db')), {
    decision: 'deny',
    reason: 'deny-list: tool argument matched a denied phrase'
  })
  t.same(
    p.evaluate(md({ tool_args: { 'drop table': 1 } })),
    { decision: 'deny', reason: 'deny-list: tool argument matched a denied phrase' },
    'keys are screened too'
  )
  t.same(p.evaluate(md({ tool_args_preview: '{"q":"rm -rf /"}' })), {
    decision: 'deny',
    reason: 'deny-list: tool argument matched a denied phrase'
  })
  t.same(p.evaluate(md({ tool_args: { big: 'a'.repeat(TOOL_ARGS_BUDGET + 1) } })), {
    decision: 'deny',
    reason: 'deny-list: tool arguments exceeded the screening budget'
  })
  t.same(p.evaluate(md({ tool_args: { q: 'select' } })), { decision: 'admit' })
  t.equal(buildErr('deny-list', {}), "deny-list requires 'phrases' or 'regex' under config")
  t.equal(buildErr('deny-list', { phrases: 'x' }), 'expected a YAML list, got: x')
  t.match(buildErr('deny-list', { regex: ['('] }), /invalid regex/)
})

t.test('allow-list: pre-admission only; blank or unmatched denied', async (t) => {
  const p = build('allow-list', { phrases: ['weather'] })
  t.same(p.evaluate(pre('What is the WEATHER?')), { decision: 'admit' })
  t.same(p.evaluate(pre('tell me a joke')), {
    decision: 'deny',
    reason: 'allow-list: message matched no configured phrase'
  })
  t.same(p.evaluate(pre('   ')), { decision: 'deny', reason: 'allow-list: message matched no configured phrase' })
  t.same(p.evaluate(post('anything')), { decision: 'admit' })
  t.equal(buildErr('allow-list', { phrases: [] }), "allow-list requires 'phrases' or 'regex' under config")
})

t.test('preference: Prefer on a match, admit otherwise; prefer and reason required', async (t) => {
  const p = build('preference', { phrases: ['python 2'], prefer: 'Python 3', reason: 'Python 2 is end-of-life' })
  t.same(p.evaluate(pre('help me with Python 2')), {
    decision: 'prefer',
    preferred: 'Python 3',
    reason: 'Python 2 is end-of-life'
  })
  t.same(p.evaluate(pre('help me with Rust')), { decision: 'admit' })
  t.equal(
    buildErr('preference', { phrases: ['x'], reason: 'r' }),
    "preference requires a non-blank 'prefer' (the preferred alternative) under config"
  )
  t.equal(
    buildErr('preference', { phrases: ['x'], prefer: 'y' }),
    "preference requires a non-blank 'reason' under config"
  )
  t.equal(buildErr('preference', { prefer: 'y', reason: 'r' }), "preference requires 'phrases' or 'regex' under config")
})

t.test('message-length', async (t) => {
  const p = build('message-length', { 'max-chars': 5 })
  t.same(p.evaluate(pre('12345')), { decision: 'admit' })
  t.same(p.evaluate(pre('123456')), { decision: 'deny', reason: 'message length 6 exceeds maximum 5 characters' })
  t.equal(buildErr('message-length', {}), "message-length requires a positive 'max-chars' under config")
  t.equal(buildErr('message-length', { 'max-chars': 'lots' }), 'expected numeric, got: lots')
})

t.test('rate-limit: sliding window per subject (user, then session, then anonymous)', async (t) => {
  let now = 1_000_000
  const p = new RateLimitPolicy('rl', 's', '1', 2, 10, new InProcessCounters(() => now))
  const u = pre('x', { userId: 'alice' })
  t.same(p.evaluate(u), { decision: 'admit' })
  t.same(p.evaluate(u), { decision: 'admit' })
  t.same(p.evaluate(u), { decision: 'deny', reason: 'rate-limited: user:alice exceeded 2 requests per 10s' })
  // users in turn are counted apart (the last user's subject string is reused)
  t.same(p.evaluate(pre('x', { userId: 'bob' })), { decision: 'admit' })
  t.same(p.evaluate(u), { decision: 'deny', reason: 'rate-limited: user:alice exceeded 2 requests per 10s' })
  t.same(p.evaluate(pre('x', { userId: 'bob' })), { decision: 'admit' })
  t.same(p.evaluate(pre('x', { userId: 'bob' })), {
    decision: 'deny',
    reason: 'rate-limited: user:bob exceeded 2 requests per 10s'
  })
  t.same(p.evaluate(pre('x', { sessionId: 's1' })), { decision: 'admit' })
  t.same(p.evaluate(pre('x')), { decision: 'admit' })
  t.same(p.evaluate(pre('x')), { decision: 'admit' })
  t.same(p.evaluate(pre('x')), { decision: 'deny', reason: 'rate-limited: anonymous exceeded 2 requests per 10s' })
  now += 10_001
  t.same(p.evaluate(u), { decision: 'admit' }, 'window slid')
  t.equal(buildErr('rate-limit', { limit: 1 }), "rate-limit requires a positive 'window-seconds' under config")
  t.equal(buildErr('rate-limit', { 'window-seconds': 1 }), "rate-limit requires a positive 'limit' under config")
})

t.test('rate-limit window: exact counts while its times grow, wrap around and shrink', async (t) => {
  let now = 0
  const counters = new InProcessCounters(() => now)
  const w = counters.window('rl', 300, 1000)
  // the times a window of 1000 ms holds, kept the plain way
  let times: number[] = []
  let seed = 7
  let mismatches = 0
  // bursts of up to 400 hits 1 ms apart, then pauses of up to 1.5 windows: full, refused, emptied
  for (let round = 0; round < 40; round++) {
    seed = (seed * 48271) % 2147483647
    const hits = seed % 400
    for (let i = 0; i < hits; i++) {
      now += 1
      const peek = i % 7 === 0
      times = times.filter((x) => x > now - 1000)
      const want =
        times.length >= 300
          ? { admitted: false, count: times.length }
          : { admitted: true, count: times.length + (peek ? 0 : 1) }
      if (want.admitted && !peek) times.push(now)
      const got = w.hit('alice', peek) as { admitted: boolean; count: number }
      if (got.admitted !== want.admitted || got.count !== want.count) mismatches++
    }
    now += seed % 1500
  }
  t.equal(mismatches, 0, 'every answer as the plain list of times gives')
})

t.test('in-process slots: idle keys are dropped once 100 000 are tracked; held ones stay', async (t) => {
  const slots = new InProcessCounters().slots('cc', 1)
  slots.acquire('held')
  for (let i = 0; i < 100_000; i++) {
    slots.acquire(`k${i}`)
    slots.release(`k${i}`)
  }
  t.same(slots.acquire('new'), { acquired: true, held: 1 })
  t.same(slots.acquire('held'), { acquired: false, held: 1 }, 'a held slot survives the sweep')
  t.equal(slots.heldHere('k5'), 0)
  t.same(slots.acquire('k5'), { acquired: true, held: 1 })
})

t.test('concurrency-limit: pre takes a slot, post releases it', async (t) => {
  const p = build('concurrency-limit', { 'max-concurrent': 1 }) as ConcurrencyLimitPolicy
  const c = pre('x', { sessionId: 's' })
  t.same(p.evaluate(c), { decision: 'admit' })
  t.same(p.evaluate(c), { decision: 'deny', reason: 'concurrency limit: session:s already has 1 in-flight (max 1)' })
  t.same(p.evaluate(post('done', { sessionId: 's' })), { decision: 'admit' })
  t.same(p.evaluate(c), { decision: 'admit' })
  p.abandon(c)
  t.equal(p.held('session:s'), 0)
  // a subject given back to none is tracked at 0: a release more never goes below it
  t.same(p.evaluate(post('done', { sessionId: 's' })), { decision: 'admit' })
  t.equal(p.held('session:s'), 0)
  t.same(p.evaluate(c), { decision: 'admit' })
  t.equal(p.held('session:s'), 1)
  t.same(p.evaluate(c), { decision: 'deny', reason: 'concurrency limit: session:s already has 1 in-flight (max 1)' })
  t.equal(
    buildErr('concurrency-limit', { 'max-concurrent': -1 }),
    "concurrency-limit requires a positive 'max-concurrent' under config"
  )
})

t.test('time-window: days, zone, wrap past midnight, reason string', async (t) => {
  // 2026-01-05 is a Monday
  const at = (iso: string) => () => Date.parse(iso)
  const d = (config: Record<string, unknown>, iso: string) =>
    timeWindowFactory({ name: 'tw', source: 's', version: '1', config }, at(iso)) as TimeWindowPolicy
  t.same(d({}, '2026-01-05T10:00:00Z').evaluate(pre('x')), { decision: 'admit' })
  t.same(d({}, '2026-01-05T17:00:00Z').evaluate(pre('x')), {
    decision: 'deny',
    reason: 'outside allowed window 09:00-17:00 (UTC) on [MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY]'
  })
  t.same(d({}, '2026-01-04T10:00:00Z').evaluate(pre('x')).decision, 'deny', 'Sunday is outside Mon-Fri')
  t.equal(
    d({ start: '22:00', end: '06:00', days: ['monday', 'Tuesday'] }, '2026-01-05T23:30:00Z').evaluate(pre('x'))
      .decision,
    'admit',
    'wraps past midnight'
  )
  t.equal(
    d({ start: '22:00', end: '06:00', days: ['monday', 'Tuesday'] }, '2026-01-06T05:59:00Z').evaluate(pre('x'))
      .decision,
    'admit'
  )
  t.equal(
    d({ start: '22:00', end: '06:00', days: ['monday'] }, '2026-01-05T12:00:00Z').evaluate(pre('x')).decision,
    'deny'
  )
  t.equal(
    d({ zone: 'America/New_York' }, '2026-01-05T15:00:00Z').evaluate(pre('x')).decision,
    'admit',
    '10:00 in New York'
  )
  t.equal(
    d({ zone: 'America/New_York' }, '2026-01-05T23:00:00Z').evaluate(pre('x')).decision,
    'deny',
    '18:00 in New York'
  )
  t.same(d({ zone: 'America/New_York', days: ['SATURDAY'] }, '2026-01-05T23:00:00Z').evaluate(pre('x')), {
    decision: 'deny',
    reason: 'outside allowed window 09:00-17:00 (America/New_York) on [SATURDAY]'
  })
  t.equal(buildErr('time-window', { days: 'monday' }), "time-window 'days' must be a YAML list")
  t.equal(buildErr('time-window', { days: ['funday'] }), 'unknown day-of-week: funday')
  t.equal(buildErr('time-window', { days: [] }), "time-window 'days' must be non-empty")
  t.equal(buildErr('time-window', { start: '9am' }), "time-window 'start' must be HH:MM, got: 9am")
  t.equal(buildErr('time-window', { zone: 'Mars/Olympus' }), "time-window: unknown zone 'Mars/Olympus'")
})

t.test('metadata-presence', async (t) => {
  const p = build('metadata-presence', { 'required-keys': ['tenant', 'purpose'] })
  t.same(p.evaluate(md({ tenant: 't', purpose: 'p' })), { decision: 'admit' })
  t.same(p.evaluate(md({ tenant: 't' })), { decision: 'deny', reason: "required metadata key 'purpose' is missing" })
  t.same(p.evaluate(md({ tenant: ' ', purpose: 'p' })), {
    decision: 'deny',
    reason: "required metadata key 'tenant' is missing"
  })
  t.same(p.evaluate(md({ tenant: null, purpose: 'p' })), {
    decision: 'deny',
    reason: "required metadata key 'tenant' is missing"
  })
  t.equal(buildErr('metadata-presence', {}), "metadata-presence requires at least one entry under 'required-keys'")
})

t.test('authorization: roles from metadata.roles (list or comma string)', async (t) => {
  const p = build('authorization', { 'required-roles': ['ops', 'admin'] })
  t.same(p.evaluate(md({})), { decision: 'deny', reason: 'no roles claimed by subject; required: [ops, admin]' })
  t.same(p.evaluate(md({ roles: ['ops'] })), {
    decision: 'deny',
    reason: "missing required role 'admin' (subject holds: [ops])"
  })
  t.same(p.evaluate(md({ roles: 'ops, admin' })), { decision: 'admit' })
  t.same(p.evaluate(md({ roles: ['ops', 'admin'] })), { decision: 'admit' })
  // a list of clean names is read as it is; any other list is cleaned as before
  t.same(p.evaluate(md({ roles: [' ops ', null, '', 'admin'] })), { decision: 'admit' })
  t.same(p.evaluate(md({ roles: [' ops', 7] })), {
    decision: 'deny',
    reason: "missing required role 'admin' (subject holds: [ops, 7])"
  })
  t.equal(
    buildErr('authorization', { 'required-roles': [] }),
    "authorization requires at least one entry under 'required-roles'"
  )
})

t.test('kill-switch: installed disarmed; armed denies both phases with the arm reason', async (t) => {
  const k = build('kill-switch', {}) as KillSwitchPolicy
  t.same(k.evaluate(pre('x')), { decision: 'admit' })
  t.same(k.state(), { armed: false })
  const s = k.arm('incident 42', 'alice')
  t.equal(s.armed, true)
  t.equal(s.reason, 'incident 42')
  t.equal(s.operator, 'alice')
  t.match(s.armedAt, /^\d{4}-\d\d-\d\dT/)
  t.same(k.evaluate(pre('x')), { decision: 'deny', reason: 'incident 42' })
  t.same(k.evaluate(post('y')), { decision: 'deny', reason: 'incident 42' })
  t.same(k.disarm(), { armed: false })
  t.same(k.evaluate(pre('x')), { decision: 'admit' })
})

t.test('pii-redaction: redact transforms the request, block denies; responses always deny', async (t) => {
  const r = build('pii-redaction', {})
  const d = r.evaluate(pre('mail bob@example.com or call +1 415 555 1234, ssn 123-45-6789, host 10.0.0.1'))
  t.equal(d.decision, 'transform')
  const msg = (d as { request: { message: string } }).request.message
  t.notMatch(msg, /bob@example.com|123-45-6789|10\.0\.0\.1/)
  t.match(msg, /\[redacted-email\]/)
  t.match(msg, /\[redacted-ssn\]/)
  t.match(msg, /\[redacted-ip\]/)
  t.same(r.evaluate(pre('nothing here')), { decision: 'admit' })
  // each kind alone, and in a reply, is still found (a text with no digit and no @ is not scanned)
  const alone: [string, string][] = [
    ['email', 'a@b.io'],
    ['phone', '4155551234'],
    ['credit-card', '4111 1111 1111 1111'],
    ['us-ssn', '123-45-6789'],
    ['ipv4', '10.0.0.1']
  ]
  for (const [kind, text] of alone) {
    t.match(r.evaluate(pre(`x ${text} y`)), { decision: 'transform', reason: new RegExp(`\\b${kind}\\b`) }, kind)
    t.match(r.evaluate(post(`x ${text} y`)), { decision: 'deny', reason: new RegExp(`\\b${kind}\\b`) }, kind)
  }
  t.same(r.evaluate(post('Your order shipped, no numbers.')), { decision: 'admit' })
  t.same(r.evaluate(post('write to bob@example.com')), {
    decision: 'deny',
    reason: 'response contains PII of kinds: [email]'
  })
  const b = build('pii-redaction', { mode: 'block' })
  t.same(b.evaluate(pre('bob@example.com')), { decision: 'deny', reason: 'request contains PII of kinds: [email]' })
  t.equal(buildErr('pii-redaction', { mode: 'shred' }), "pii-redaction 'mode' must be 'redact' or 'block', got: shred")
})

t.test('cost-ceiling: per-tenant spend reaching the budget denies; 0 disables', async (t) => {
  const p = build('cost-ceiling', { 'budget-usd': 1 }) as CostCeilingPolicy
  const tenant = md({ 'business.tenant.id': 'acme' })
  t.same(p.evaluate(tenant), { decision: 'admit' })
  p.evaluate(post('r', { metadata: { 'business.tenant.id': 'acme', cost_usd: 0.6 } }))
  t.same(p.evaluate(tenant), { decision: 'admit' })
  p.addCost('acme', 0.4)
  t.same(p.evaluate(tenant), {
    decision: 'deny',
    reason: 'cost ceiling reached for tenant acme (spent 1.0000 of budget 1.0)'
  })
  t.same(p.evaluate(md({})), { decision: 'admit' }, 'other tenants unaffected')
  const off = build('cost-ceiling', {}) as CostCeilingPolicy
  off.addCost(null, 100)
  t.same(off.evaluate(md({})), { decision: 'admit' })
  t.equal(buildErr('cost-ceiling', { 'budget-usd': -1 }), 'budgetUsd must be >= 0, got -1')
})

t.test('output-length-zscore: drifting responses denied after min-samples', async (t) => {
  const p = build('output-length-zscore', { 'window-size': 10, 'z-threshold': 3, 'min-samples': 5 })
  for (const n of [100, 102, 98, 101, 99]) t.same(p.evaluate(post('x'.repeat(n))), { decision: 'admit' })
  t.same(p.evaluate(post('x'.repeat(100))), { decision: 'admit' })
  const d = p.evaluate(post('x'.repeat(5000)))
  t.equal(d.decision, 'deny')
  t.match(
    (d as { reason: string }).reason,
    /^response length z-score \d+\.\d\d exceeds threshold 3\.0 \(possible drift\)$/
  )
  t.same(p.evaluate(pre('x'.repeat(5000))), { decision: 'admit' }, 'requests are not screened')
  // the window's sums kept as lengths come and go answer as summing the window every time did
  const q = build('output-length-zscore', { 'window-size': 7, 'z-threshold': 1.5, 'min-samples': 4 })
  const w: number[] = []
  for (let i = 0; i < 120; i++) {
    const n = ((i * 37) % 101) + (i % 13 === 0 ? 400 : 0)
    let want: unknown = { decision: 'admit' }
    if (w.length >= 4) {
      const mean = w.reduce((a, v) => a + v, 0) / w.length
      const variance = w.reduce((a, v) => a + v * v, 0) / w.length - mean * mean
      const z = Math.abs((n - mean) / (variance > 0 ? Math.sqrt(variance) : 1))
      if (z > 1.5)
        want = {
          decision: 'deny',
          reason: `response length z-score ${z.toFixed(2)} exceeds threshold 1.5 (possible drift)`
        }
    }
    w.push(n)
    if (w.length > 7) w.shift()
    t.same(q.evaluate(post('x'.repeat(n))), want, `response ${i}`)
  }
  t.equal(buildErr('output-length-zscore', { 'window-size': 1 }), 'windowSize must be >= 2')
  t.equal(buildErr('output-length-zscore', { 'z-threshold': 0 }), 'zScoreThreshold must be > 0')
  t.equal(buildErr('output-length-zscore', { 'min-samples': 1 }), 'minSamples must be >= 2')
})
