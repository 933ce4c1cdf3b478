// Admin writes need a role by default (`admin`): a token without it is refused and changes
// nothing; and the kill switch names the authenticated principal beside the `operator` label a
// caller chooses, so carol arming "as alice" reads as carol in its state, health and log line.
import t from 'tap'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'

const OPERATOR = 'operator-token-0123456789abcdef'
const ROLELESS = 'roleless-token-0123456789abcdef'
const CAROL = 'carol-token-0123456789abcdef'
const config = {
  'platform.admin.http-write-enabled': true,
  'platform.ai.governance.kill-switch.enabled': true,
  'platform.auth.tokens': [
    { token: OPERATOR, principal: 'olga', roles: ['admin'] },
    { token: ROLELESS, principal: 'mallory' },
    { token: CAROL, principal: 'carol', roles: ['admin'] }
  ]
}

async function call(tp: TestPlatform, method: string, path: string, token: string, body?: unknown) {
  const r = await fetch(tp.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await r.text()
  return { status: r.status, body: text === '' ? null : JSON.parse(text) }
}

const RUN = { id: 'run-1', baseline: 'bot:v1', timestamp: '2026-03-01T10:00:00Z', passed: true }

t.test('a token without the default role is refused every admin write and changes nothing', async (t) => {
  const tp = await startTestPlatform(config, { install: installAreas })
  t.teardown(tp.close)
  t.equal((await call(tp, 'POST', '/api/admin/evals/runs', OPERATOR, RUN)).status, 200)

  const armed = await call(tp, 'POST', '/api/admin/governance/kill-switch/arm', ROLELESS, { reason: 'prank' })
  t.equal(armed.status, 403)
  t.equal(armed.body.code, 'PLT_ERR_ADMIN_ROLE_REQUIRED')
  t.equal((await call(tp, 'GET', '/api/admin/governance/health', ROLELESS)).body.killSwitch.armed, false)

  const deleted = await call(tp, 'DELETE', '/api/admin/evals/runs/run-1', ROLELESS)
  t.equal(deleted.status, 403)
  t.equal(deleted.body.code, 'PLT_ERR_ADMIN_ROLE_REQUIRED')
  t.equal((await call(tp, 'GET', '/api/admin/evals/runs/run-1', ROLELESS)).status, 200, 'the run is still there')

  await call(tp, 'POST', '/api/admin/governance/kill-switch/arm', OPERATOR, { reason: 'incident' })
  const disarmed = await call(tp, 'POST', '/api/admin/governance/kill-switch/disarm', ROLELESS)
  t.equal(disarmed.status, 403)
  t.equal((await call(tp, 'GET', '/api/admin/governance/health', ROLELESS)).body.killSwitch.armed, true)

  const audit = (await call(tp, 'GET', '/api/admin/audit?limit=100', OPERATOR)).body as Record<string, unknown>[]
  t.match(
    audit.filter((e) => e.principal === 'mallory').map((e) => e.action),
    ['governance.kill_switch.arm.denied.role', 'evals.delete.denied.role', 'governance.kill_switch.disarm.denied.role']
  )
})

t.test("`required-role: '*'` lets any authenticated principal write", async (t) => {
  const tp = await startTestPlatform({ ...config, 'platform.admin.required-role': '*' }, { install: installAreas })
  t.teardown(tp.close)
  const armed = await call(tp, 'POST', '/api/admin/governance/kill-switch/arm', ROLELESS, { reason: 'drill' })
  t.equal(armed.status, 200)
  t.equal(armed.body.principal, 'mallory')
})

t.test('the kill switch names the principal beside a forged operator label', async (t) => {
  const tp = await startTestPlatform({ ...config, 'platform.log-level': 'warn' }, { install: installAreas })
  t.teardown(tp.close)
  const armed = await call(tp, 'POST', '/api/admin/governance/kill-switch/arm', CAROL, {
    reason: 'incident 7',
    operator: 'alice'
  })
  t.equal(armed.status, 200)
  t.match(armed.body, { armed: true, reason: 'incident 7', operator: 'alice', principal: 'carol' })
  const health = await call(tp, 'GET', '/api/admin/governance/health', CAROL)
  t.match(health.body.killSwitch, { armed: true, operator: 'alice', principal: 'carol' })
  const line = tp.logs.find((l) => String(l.msg).startsWith('governance kill switch armed'))
  t.match(line, { principal: 'carol', operator: 'alice' })
  t.match(String(line?.msg), /armed by carol\b/, 'the log line says who armed it')
  t.notMatch(String(line?.msg), /armed by alice/)
})
