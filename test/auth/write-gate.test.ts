import t from 'tap'
import { createHash } from 'node:crypto'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import type { Platform } from '../../runtime/platform.js'
import type { PlatformEvent } from '../../runtime/events/index.js'

const ADMIN = 'admin-token-0123456789'
const VIEWER = 'viewer-token-0123456789'
const HASHED = 'hashed-token-0123456789'
const tokens = [
  { token: ADMIN, principal: 'alice', roles: ['admin'] },
  { token: VIEWER, principal: 'bob', roles: ['viewer'] },
  { sha256: createHash('sha256').update(HASHED).digest('hex'), principal: 'carol', roles: ['admin'] }
]

function install(p: Platform): void {
  p.http.post(
    '/api/admin/test/write',
    async (ctx) => {
      const principal = p.writeGate.guard(ctx, 'broadcast', 'room-1')
      await p.writeGate.done(principal, 'broadcast', 'room-1', true)
      return { status: 'ok', principal: principal.name }
    },
    { body: 'json', optionalBody: true }
  )
  p.http.get('/api/admin/test/audit', () => p.audit.entries(100))
}

async function start(over: Record<string, unknown>): Promise<TestPlatform> {
  return await startTestPlatform({ 'platform.auth.tokens': tokens, ...over }, { install })
}
const post = (tp: TestPlatform, headers: Record<string, string> = {}) =>
  fetch(tp.url + '/api/admin/test/write', { method: 'POST', headers })

t.test('step 1: feature flag off is 403 with the reference message and hint, audited .denied.flag', async (t) => {
  const tp = await start({})
  t.teardown(tp.close)
  const r = await post(tp, { authorization: `Bearer ${ADMIN}` })
  t.equal(r.status, 403)
  t.same(await r.json(), {
    error: 'Admin write operations disabled',
    code: 'PLT_ERR_ADMIN_WRITE_DISABLED',
    hint: 'Set platform.admin.http-write-enabled=true to enable'
  })
  const audit = tp.platform.audit.entries(10)
  t.match(audit.at(-1), { principal: 'anonymous', action: 'broadcast.denied.flag', target: 'room-1', success: false })
})

t.test('step 2: no principal is 401, audited .denied.anonymous', async (t) => {
  const tp = await start({ 'platform.admin.http-write-enabled': true })
  t.teardown(tp.close)
  for (const headers of [
    {},
    { authorization: 'Bearer wrong-token-xxxxxxxx' },
    { 'x-platform-auth': 'nope' },
    { authorization: 'Basic abc' }
  ] as Record<string, string>[]) {
    const r = await post(tp, headers)
    t.equal(r.status, 401)
    t.same(await r.json(), {
      error: 'Authentication required for admin write operations',
      code: 'PLT_ERR_ADMIN_AUTH_REQUIRED'
    })
  }
  t.equal(tp.platform.audit.entries(10).at(-1)!.action, 'broadcast.denied.anonymous')
})

t.test('tokens by Bearer, X-Platform-Auth and SHA-256 digest all resolve', async (t) => {
  const tp = await start({ 'platform.admin.http-write-enabled': true })
  t.teardown(tp.close)
  const events: PlatformEvent[] = []
  tp.platform.bus.on('ControlActionExecuted', (e) => {
    events.push(e)
  })
  t.same(await (await post(tp, { authorization: `Bearer ${ADMIN}` })).json(), { status: 'ok', principal: 'alice' })
  t.same(await (await post(tp, { 'x-platform-auth': ADMIN })).json(), { status: 'ok', principal: 'alice' })
  t.same(await (await post(tp, { authorization: `bearer ${HASHED}` })).json(), { status: 'ok', principal: 'carol' })
  const audit = tp.platform.audit.entries(10)
  t.match(audit.at(-1), { principal: 'carol', action: 'broadcast', target: 'room-1', success: true })
  t.match(audit.at(-1)!.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.equal(events.length, 3)
  t.match(events[0], {
    type: 'ControlActionExecuted',
    principal: 'alice',
    action: 'broadcast',
    target: 'room-1',
    success: true
  })
})

t.test('step 3: required role missing is 403, audited .denied.role', async (t) => {
  const tp = await start({ 'platform.admin.http-write-enabled': true, 'platform.admin.required-role': 'admin' })
  t.teardown(tp.close)
  const r = await post(tp, { authorization: `Bearer ${VIEWER}` })
  t.equal(r.status, 403)
  t.same(await r.json(), { error: 'Forbidden: caller lacks required role', code: 'PLT_ERR_ADMIN_ROLE_REQUIRED' })
  t.match(tp.platform.audit.entries(1)[0], { principal: 'bob', action: 'broadcast.denied.role' })
  t.equal((await post(tp, { authorization: `Bearer ${ADMIN}` })).status, 200)
})

t.test('step 4: the authorizer denies with 403 Forbidden, audited .denied.authz', async (t) => {
  const tp = await start({ 'platform.admin.http-write-enabled': true, 'platform.admin.authorizer': 'deny-all' })
  t.teardown(tp.close)
  const r = await post(tp, { authorization: `Bearer ${ADMIN}` })
  t.equal(r.status, 403)
  t.same(await r.json(), { error: 'Forbidden', code: 'PLT_ERR_ADMIN_FORBIDDEN' })
  t.match(tp.platform.audit.entries(1)[0], { principal: 'alice', action: 'broadcast.denied.authz', success: false })
})

t.test('require-principal=false falls back to DENY_ALL', async (t) => {
  const tp = await start({ 'platform.admin.http-write-enabled': true, 'platform.admin.require-principal': false })
  t.teardown(tp.close)
  t.equal((await post(tp, { authorization: `Bearer ${ADMIN}` })).status, 403)
})

t.test('role-based authorizer', async (t) => {
  const tp = await start({
    'platform.admin.http-write-enabled': true,
    'platform.admin.authorizer': 'roles',
    'platform.admin.authorizer-roles': { broadcast: ['admin'] }
  })
  t.teardown(tp.close)
  t.equal((await post(tp, { authorization: `Bearer ${VIEWER}` })).status, 403)
  t.equal((await post(tp, { authorization: `Bearer ${ADMIN}` })).status, 200)
})

t.test('the check order is flag, principal, role, authorizer', async (t) => {
  // flag off and anonymous and wrong role: the flag answers first
  const tp = await start({ 'platform.admin.required-role': 'admin', 'platform.admin.authorizer': 'deny-all' })
  t.teardown(tp.close)
  t.equal((await post(tp)).status, 403)
  t.equal(tp.platform.audit.entries(1)[0]!.action, 'broadcast.denied.flag')
})

t.test('the audit log survives a restart (LMDB) and keeps its order', async (t) => {
  const tp = await start({ 'platform.admin.http-write-enabled': true })
  await post(tp, { authorization: `Bearer ${ADMIN}` })
  await post(tp)
  const before = tp.platform.audit.entries(10)
  const dataDir = tp.dataDir
  await tp.platform.close()
  const again = await startTestPlatform({ 'platform.auth.tokens': tokens, 'platform.data-dir': dataDir }, { install })
  t.teardown(again.close)
  t.same(again.platform.audit.entries(10), before)
  t.same(again.platform.audit.history(10), [...before].reverse())
})
