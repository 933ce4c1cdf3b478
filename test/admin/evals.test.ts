// The evals routes over HTTP: validation, immutability, baselines, delete, the grants evals.write
// and evals.delete with their audit entries, and runs that survive a restart of the platform.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { adminPlatform, call } from './helpers.js'

const CI = 'ci-token-0123456789abcdef'
const OPS = 'ops-token-0123456789abcdef'
const config = {
  'platform.admin.http-write-enabled': true,
  'platform.admin.authorizer': 'roles',
  'platform.admin.authorizer-roles': { 'evals.write': ['evals'], 'evals.delete': ['ops'] },
  'platform.auth.tokens': [
    { token: CI, principal: 'ci', roles: ['admin', 'evals'] },
    { token: OPS, principal: 'ops', roles: ['admin', 'ops'] }
  ]
}
const dir = mkdtempSync(join(tmpdir(), 'evals-http-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const RUN = {
  id: 'run-1',
  baseline: 'support-bot:v1',
  timestamp: '2026-03-01T10:00:00Z',
  agentVersion: '1.4.0',
  prompt: 'How do I reset my password?',
  judgeResponse: 'Accurate and polite.',
  verdict: true,
  scores: { accuracy: 0.9 },
  judgeModel: 'judge-1',
  passed: true,
  notes: null
}

t.test('record, read, summarize and delete runs, each write granted and audited', async (t) => {
  const tp = await adminPlatform({ ...config, 'platform.data-dir': dir })
  t.teardown(tp.close)
  const audit = () => ({ ...tp.platform.audit.entries(1)[0] })

  const created = await call(tp, 'POST', '/evals/runs', { token: CI, body: RUN })
  t.same(created.body, { id: 'run-1', baseline: 'support-bot:v1', passed: true })
  t.match(audit(), { principal: 'ci', action: 'evals.write', target: 'run-1', success: true })
  const stored = await call(tp, 'GET', '/evals/runs/run-1', { token: CI })
  t.same(stored.body, { ...RUN, timestamp: '2026-03-01T10:00:00.000Z', notes: '' })
  t.same(Object.keys(stored.body), Object.keys(RUN), 'emitted order')

  const dup = await call(tp, 'POST', '/evals/runs', { token: CI, body: { ...RUN, passed: false } })
  t.equal(dup.status, 400)
  t.same(dup.body, {
    error: 'EvalRun id run-1 already exists; eval runs are immutable',
    code: 'PLT_ERR_EVAL_RUN_EXISTS'
  })
  t.match(audit(), { action: 'evals.write', success: false })

  for (const [body, detail] of [
    [{ ...RUN, id: 'bad id' }, 'id must match [A-Za-z0-9_\\-.:]+ (was: bad id)'],
    [{ ...RUN, id: 'ok', baseline: 'a/b' }, 'baseline must match [A-Za-z0-9_\\-.:]+ (was: a/b)'],
    [{ ...RUN, id: 'ok', timestamp: 'soon' }, 'timestamp must be an ISO-8601 instant (was: soon)'],
    [{ ...RUN, id: 'ok', scores: { a: 'high' } }, 'scores.a must be a number'],
    [[1], 'expected a JSON object (an EvalRun)'],
    [{ ...RUN, id: { toString: null } }, 'id must match [A-Za-z0-9_\\-.:]+ (was: {"toString":null})'],
    [
      { ...RUN, id: 'ok', timestamp: { toString: null } },
      'timestamp must be an ISO-8601 instant (was: {"toString":null})'
    ]
  ] as const) {
    const r = await call(tp, 'POST', '/evals/runs', { token: CI, body })
    t.equal(r.status, 400)
    t.same(r.body, { error: `Invalid eval run: ${detail}`, code: 'PLT_ERR_EVAL_RUN_INVALID' })
  }
  t.equal((await call(tp, 'GET', '/evals/runs/ok', { token: CI })).status, 404, 'nothing invalid was stored')

  await call(tp, 'POST', '/evals/runs', {
    token: CI,
    body: { id: 'run-2', baseline: 'support-bot:v1', timestamp: '2026-03-02T10:00:00Z', passed: false }
  })
  await call(tp, 'POST', '/evals/runs', {
    token: CI,
    body: { id: 'run-3', baseline: 'a-first', timestamp: '2026-03-03T10:00:00Z', passed: true }
  })
  t.same(
    (await call(tp, 'GET', '/evals/runs', { token: CI })).body.map((r: any) => r.id),
    ['run-3', 'run-2', 'run-1']
  )
  t.same(
    (await call(tp, 'GET', '/evals/runs?baseline=support-bot:v1&limit=1', { token: CI })).body.map((r: any) => r.id),
    ['run-2']
  )
  t.same((await call(tp, 'GET', '/evals/baselines')).body, [
    { baseline: 'a-first', total: 1, passed: 1, passRate: 1, lastRunAt: '2026-03-03T10:00:00.000Z', lastVerdict: true },
    {
      baseline: 'support-bot:v1',
      total: 2,
      passed: 1,
      passRate: 0.5,
      lastRunAt: '2026-03-02T10:00:00.000Z',
      lastVerdict: false
    }
  ])

  const denied = await call(tp, 'DELETE', '/evals/runs/run-3', { token: CI })
  t.equal(denied.status, 403, 'evals.write does not grant evals.delete')
  t.match(audit(), { principal: 'ci', action: 'evals.delete.denied.authz', target: 'run-3' })
  t.equal((await call(tp, 'POST', '/evals/runs', { token: OPS, body: { ...RUN, id: 'x' } })).status, 403)
  const del = await call(tp, 'DELETE', '/evals/runs/run-3', { token: OPS })
  t.same(del.body, { deleted: 'run-3' })
  t.match(audit(), { principal: 'ops', action: 'evals.delete', target: 'run-3', success: true })
  t.same((await call(tp, 'DELETE', '/evals/runs/run-3', { token: OPS })).body, {
    error: "Unknown eval run 'run-3'",
    code: 'PLT_ERR_UNKNOWN_EVAL_RUN'
  })
})

t.test('the runs are still there after a restart on the same data directory', async (t) => {
  const tp = await adminPlatform({ ...config, 'platform.data-dir': dir })
  t.teardown(tp.close)
  t.same(
    (await call(tp, 'GET', '/evals/runs', { token: CI })).body.map((r: any) => r.id),
    ['run-2', 'run-1']
  )
  t.equal((await call(tp, 'POST', '/evals/runs', { token: CI, body: RUN })).status, 400, 'still immutable')
})

t.test('platform.admin.evals.store=memory keeps runs for the life of the process only', async (t) => {
  const mem = mkdtempSync(join(tmpdir(), 'evals-mem-'))
  t.teardown(() => rmSync(mem, { recursive: true, force: true }))
  const first = await adminPlatform({ ...config, 'platform.data-dir': mem, 'platform.admin.evals.store': 'memory' })
  t.equal((await call(first, 'POST', '/evals/runs', { token: CI, body: RUN })).status, 200)
  await first.close()
  const second = await adminPlatform({ ...config, 'platform.data-dir': mem, 'platform.admin.evals.store': 'memory' })
  t.teardown(second.close)
  t.same((await call(second, 'GET', '/evals/runs', { token: CI })).body, [])
})
