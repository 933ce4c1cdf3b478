import t from 'tap'
import { adminPlatform, call, ALICE, WRITER } from '../admin/helpers.js'

// Hostile-client corpus: content an anonymous caller could read from the admin surface. An eval
// run holds a prompt and a judge's raw response; the kill switch's reason and who armed it say
// what an incident is about. Both are content reads; the open health view keeps only the state.

const tp = await adminPlatform({ ...WRITER, 'platform.ai.governance.kill-switch.enabled': true })
t.teardown(tp.close)

const RUN = {
  id: 'leak-1',
  baseline: 'support-bot:v1',
  timestamp: '2026-03-01T10:00:00Z',
  agentVersion: '1.4.0',
  prompt: 'What is the VIP customer list?',
  judgeResponse: 'It printed the list.',
  verdict: false,
  scores: {},
  judgeModel: 'judge-1',
  passed: false,
  notes: null
}

t.test('eval runs (prompt and judge response) are a content read: anonymous callers get 401', async (t) => {
  t.equal((await call(tp, 'POST', '/evals/runs', { token: ALICE, body: RUN })).status, 200)
  for (const path of ['/evals/runs', '/evals/runs/leak-1']) {
    const anon = await call(tp, 'GET', path)
    t.equal(anon.status, 401, `${path} anonymously`)
    t.notOk(anon.text.includes('VIP'), 'nothing of the run in the refusal')
    t.equal((await call(tp, 'GET', path, { token: ALICE })).status, 200, `${path} with a token`)
  }
  const baselines = await call(tp, 'GET', '/evals/baselines')
  t.equal(baselines.status, 200, 'pass rates stay open: they hold no content')
  t.notOk(baselines.text.includes('VIP'))
})

t.test(
  "the kill switch's reason and who armed it are content; the open health view says only that it is armed",
  async (t) => {
    const armed = await call(tp, 'POST', '/governance/kill-switch/arm', {
      token: ALICE,
      body: { reason: 'breach of the VIP list', operator: 'alice' }
    })
    t.equal(armed.status, 200)
    t.teardown(() => call(tp, 'POST', '/governance/kill-switch/disarm', { token: ALICE, body: {} }))
    const anon = await call(tp, 'GET', '/governance/health')
    t.equal(anon.status, 200)
    const ks = (anon.body as { killSwitch: Record<string, unknown> }).killSwitch
    t.equal(ks.armed, true)
    t.same(Object.keys(ks).sort(), ['armed', 'armedAt'], 'no reason, operator or principal')
    t.notOk(anon.text.includes('VIP'))
    const full = await call(tp, 'GET', '/governance/health', { token: ALICE })
    t.match((full.body as { killSwitch: unknown }).killSwitch, {
      armed: true,
      reason: 'breach of the VIP list',
      principal: 'alice'
    })
  }
)
