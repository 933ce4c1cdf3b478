import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { policyDigest } from '../../runtime/governance/digest.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const installGovernance = (p: Platform) => installAreas(p, [scopeArea, governanceArea])

const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789ab'
const tokens = [
  { token: ALICE, principal: 'alice', roles: ['admin', 'ops'] },
  { token: BOB, principal: 'bob' }
]
const dir = mkdtempSync(join(tmpdir(), 'gov-routes-'))
const policies = join(dir, 'native.yaml')
writeFileSync(
  policies,
  `version: "1.0"
policies:
  - name: kill-switch
    type: kill-switch
  - name: content
    type: deny-list
    swappable: true
    config: {phrases: [forbidden]}
  - name: shadow
    type: message-length
    dry-run: true
    config: {max-chars: 10}
`
)
const rules = join(dir, 'agt.yaml')
writeFileSync(
  rules,
  `version: "2"
name: agt-rules
rules:
  - name: block-delete-database
    condition: {field: tool_name, operator: eq, value: delete_database}
    action: deny
    priority: 100
    message: Deleting databases is not allowed
  - name: big-amounts
    condition: {field: amount, operator: gt, value: 1000}
    action: block
defaults:
  action: allow
`
)

const install = installGovernance
const tp = await startTestPlatform(
  {
    'platform.ai.governance.policy-files': [policies, rules],
    'platform.admin.http-write-enabled': true,
    'platform.auth.tokens': tokens
  },
  { install }
)
t.teardown(tp.close)
const url = (p: string) => `${tp.url}/api/admin/governance${p}`
const auth = (token: string) => ({ authorization: `Bearer ${token}` })
async function call(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  base = tp.url
) {
  const r = await fetch(`${base}/api/admin/governance${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {})
  })
  const text = await r.text()
  return { status: r.status, body: text === '' ? undefined : JSON.parse(text) }
}

t.test('GET policies: the live chain with digests and wrapper fields', async (t) => {
  const r = await call('/policies')
  t.equal(r.status, 200)
  t.same(
    r.body.map((p: { name: string }) => p.name),
    ['kill-switch', 'content', 'shadow', 'agt-rules']
  )
  const [ks, content, shadow, agt] = r.body
  t.same(ks, {
    name: 'kill-switch',
    source: `yaml:${policies}`,
    version: '1.0',
    className: 'KillSwitchPolicy',
    digest: policyDigest('kill-switch', `yaml:${policies}`, '1.0'),
    armed: false
  })
  t.match(ks.digest, /^sha256:[0-9a-f]{64}$/)
  t.same([content.swappable, content.delegateVersion, content.className], [true, '1.0', 'SwappablePolicy'])
  t.same(
    [
      shadow.dryRun,
      shadow.wrappedPolicyName,
      shadow.shadowAdmits,
      shadow.shadowDenies,
      shadow.shadowTransforms,
      shadow.delegateErrors
    ],
    [true, 'shadow', 0, 0, 0, 0]
  )
  t.same([agt.source, agt.version, agt.className], [`yaml:${rules}`, '2', 'RulesPolicy'])
})

t.test('digest formula: sha256 of name|source|version and a newline', async (t) => {
  const { createHash } = await import('node:crypto')
  t.equal(policyDigest('a', 'b', 'c'), 'sha256:' + createHash('sha256').update('a|b|c\n').digest('hex'))
})

t.test('GET summary: exactly policyCount and de-duplicated sources', async (t) => {
  t.same((await call('/summary')).body, { policyCount: 4, sources: [`yaml:${policies}`, `yaml:${rules}`] })
})

t.test('POST check: toolkit protocol; open; never writes the decision log', async (t) => {
  const log = governanceOf(tp.platform)!.decisionLog
  const before = log.recent(1000).length
  const deny = await call('/check', {
    body: { agent_id: 'a1', action: 'call_tool', context: { tool_name: 'delete_database' } }
  })
  t.equal(deny.status, 200)
  t.same(Object.keys(deny.body), [
    'allowed',
    'decision',
    'reason',
    'matched_policy',
    'matched_source',
    'evaluation_ms',
    'dry_run'
  ])
  t.same(
    { ...deny.body, evaluation_ms: 0 },
    {
      allowed: false,
      decision: 'deny',
      reason: 'Deleting databases is not allowed',
      matched_policy: 'agt-rules',
      matched_source: `yaml:${rules}`,
      evaluation_ms: 0,
      dry_run: true
    }
  )
  t.type(deny.body.evaluation_ms, 'number')
  const big = await call('/check', { body: { agent_id: 'a1', action: 'pay', context: { amount: 5000 } } })
  t.same([big.body.allowed, big.body.reason], [false, "matched rule 'big-amounts'"])
  const ok = await call('/check', { body: { agent_id: 'a1', action: 'read', context: { message: 'hello' } } })
  t.same(
    { ...ok.body, evaluation_ms: 0 },
    {
      allowed: true,
      decision: 'allow',
      reason: '',
      matched_policy: null,
      matched_source: null,
      evaluation_ms: 0,
      dry_run: true
    }
  )
  const msg = await call('/check', { body: { context: { message: 'this is forbidden' } } })
  t.same(
    [msg.body.allowed, msg.body.matched_policy, msg.body.reason],
    [false, 'content', 'deny-list: request matched a denied phrase'],
    'context.message becomes the message; missing keys default'
  )
  t.equal(log.recent(1000).length, before)
})

t.test('POST check: action reaches rules as metadata unless context has one; bad bodies are 400', async (t) => {
  const svc = governanceOf(tp.platform)!
  svc.setSource('check-test', [
    svc.parse(
      'yaml',
      'yaml:inline',
      'name: act\nrules:\n  - {name: r, condition: {field: action, operator: eq, value: drop}, action: deny}\n'
    )[0]!
  ])
  t.equal((await call('/check', { body: { action: 'drop' } })).body.allowed, false)
  t.equal((await call('/check', { body: { action: 'drop', context: { action: 'read' } } })).body.allowed, true)
  svc.removeSource('check-test')
  for (const body of ['[1]', '"x"', '{"agent_id": 5}', '{"context": []}', '{"action": {}}']) {
    const r = await call('/check', { body })
    t.equal(r.status, 400, body)
    t.equal(r.body.code, 'PLT_ERR_INVALID_BODY')
  }
  t.equal((await call('/check', { body: '{"agent_id":' })).status, 400)
})

t.test('POST check: an unknown body key is 400 naming it (a typo must not check an empty request)', async (t) => {
  const typo = await call('/check', {
    body: { agentId: 'a1', action: 'call_tool', context: { tool_name: 'delete_database' } }
  })
  t.equal(typo.status, 400)
  t.same(typo.body, {
    error: "Invalid request body: unknown key 'agentId' (did you mean 'agent_id'?); expected agent_id, action, context",
    code: 'PLT_ERR_INVALID_BODY'
  })
  const other = await call('/check', { body: { action: 'read', message: 'hello' } })
  t.equal(other.status, 400)
  t.equal(other.body.error, "Invalid request body: unknown key 'message'; expected agent_id, action, context")
  t.equal(
    (await call('/check', { body: { context: { anything: 1, goes: 'here' } } })).status,
    200,
    'context stays free-form'
  )
})

t.test('POST check: a transform reports its reason (built-in, plugin-style without one, and prefer)', async (t) => {
  const svc = governanceOf(tp.platform)!
  svc.setSource(
    'check-transform',
    svc.parse('yaml', 'yaml:inline', 'version: "1.0"\npolicies:\n  - name: pii\n    type: pii-redaction\n')
  )
  t.teardown(() => {
    svc.removeSource('check-transform')
  })
  const r = await call('/check', { body: { context: { message: 'mail me at bob@example.com' } } })
  t.equal(r.status, 200)
  t.match(r.body, {
    allowed: true,
    decision: 'transform',
    reason: 'redacted PII of kinds: [email]',
    matched_policy: 'pii'
  })
  svc.setSource('check-transform', [
    {
      name: 'bare',
      source: 'code:bare',
      version: '1',
      evaluate: (c: any) => ({ decision: 'transform', request: { ...c.request, message: 'x' } })
    } as any
  ])
  t.match((await call('/check', { body: { context: { message: 'hi' } } })).body, {
    decision: 'transform',
    reason: "request transformed by policy 'bare'",
    matched_policy: 'bare'
  })
  svc.setSource('check-transform', [
    {
      name: 'pref',
      source: 'code:pref',
      version: '1',
      evaluate: () => ({ decision: 'prefer', preferred: 'small-model', reason: 'cheaper for short questions' })
    } as any
  ])
  t.match((await call('/check', { body: { context: { message: 'hi' } } })).body, {
    decision: 'prefer',
    reason: 'cheaper for short questions',
    matched_policy: 'pref'
  })
})

t.test('POST check: a question, not a turn: concurrency slots are given back and the chain is not stuck', async (t) => {
  const svc = governanceOf(tp.platform)!
  svc.setSource(
    'slots',
    svc.parse(
      'yaml',
      'yaml:slots',
      'policies:\n  - {name: one-slot, type: concurrency-limit, config: {max-concurrent: 1}}\n'
    )
  )
  for (let i = 0; i < 3; i++)
    t.equal((await call('/check', { body: { context: { user_id: 'x' } } })).body.allowed, true)
  const held = await svc.gate.admit('t', aiRequest({ message: 'm' }))
  t.equal(held.admitted, true, 'a real admission still gets the slot')
  const second = await call('/check', { body: { context: {} } })
  t.same(
    [second.body.allowed, second.body.reason],
    [false, 'concurrency limit: anonymous already has 1 in-flight (max 1)']
  )
  await svc.gate.afterResponse('t', aiRequest({ message: 'm' }), 'done')
  t.equal((await call('/check', { body: { context: {} } })).body.allowed, true)
  svc.removeSource('slots')
})

t.test('GET decisions: needs a principal; newest first; limit validated', async (t) => {
  const svc = governanceOf(tp.platform)!
  await svc.gate.admit('t', aiRequest({ message: 'one' }))
  await svc.gate.admit('t', aiRequest({ message: 'two forbidden' }))
  const anon = await call('/decisions')
  t.equal(anon.status, 401)
  t.same(anon.body, {
    error: 'Admin read operations require authentication',
    code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED',
    hint: 'Send X-Platform-Auth header or disable platform.admin.content-read-auth-required'
  })
  const r = await call('/decisions?limit=2', { headers: auth(BOB) })
  t.equal(r.status, 200)
  t.equal(r.body.length, 2)
  t.same(
    [r.body[0].policy_name, r.body[0].decision, r.body[0].context_snapshot.message],
    ['content', 'deny', 'two forbidden']
  )
  t.same(Object.keys(r.body[0]), [
    'timestamp',
    'policy_name',
    'policy_source',
    'policy_version',
    'decision',
    'reason',
    'evaluation_ms',
    'context_snapshot'
  ])
  for (const bad of ['0', '-1', 'x', '1.5'])
    t.equal((await call(`/decisions?limit=${bad}`, { headers: auth(BOB) })).status, 400, bad)
  t.ok((await call('/decisions', { headers: { 'x-platform-auth': BOB } })).body.length >= 2)
})

t.test('GET owasp, compliance, agt-verify shapes', async (t) => {
  const o = (await call('/owasp')).body
  t.equal(o.total_rows, 10)
  t.same(
    o.rows.map((r: { id: string }) => r.id),
    ['ASI01', 'ASI02', 'ASI03', 'ASI04', 'ASI05', 'ASI06', 'ASI07', 'ASI08', 'ASI09', 'ASI10']
  )
  t.same(Object.keys(o.coverage_counts), ['COVERED', 'PARTIAL', 'DESIGN', 'NOT_ADDRESSED'])
  t.same(Object.keys(o.rows[0]), ['id', 'title', 'description', 'coverage', 'notes', 'evidence'])
  t.same(Object.keys(o.rows[0].evidence[0]), ['class', 'test', 'consumer_grep', 'description'])
  const c = (await call('/compliance')).body
  t.same(Object.keys(c), ['EU_AI_ACT', 'HIPAA', 'SOC2'])
  t.same(Object.keys(c.HIPAA), ['framework', 'rows', 'coverage_counts', 'total_rows'])
  const v = (await call('/agt-verify')).body
  t.equal(v.schemaVersion, 'agt-verify/1')
  t.equal(v.findings.length, 25)
  t.same(Object.keys(v.summary), ['OWASP_AGENTIC_TOP_10', 'EU_AI_ACT', 'HIPAA', 'SOC2'])
  for (const [fw, counts] of Object.entries(v.summary) as [string, Record<string, number>][]) {
    t.equal(
      Object.values(counts).reduce((a, b) => a + b, 0),
      fw === 'OWASP_AGENTIC_TOP_10' ? 10 : 5,
      fw
    )
  }
  const withEvidence = v.findings.find((f: { evidence: unknown[] }) => f.evidence.length > 0)
  t.same(Object.keys(withEvidence.evidence[0]), ['class', 'test', 'consumerGrep', 'description'])
})

t.test('kill switch: arm over HTTP denies every admission and /check; disarm restores', async (t) => {
  const svc = governanceOf(tp.platform)!
  const blank = await call('/kill-switch/arm', { body: { reason: '  ' }, headers: auth(ALICE) })
  t.same([blank.status, blank.body.error], [400, 'reason must not be blank'])
  t.equal(
    (await call('/kill-switch/arm', { method: 'POST', headers: auth(ALICE) })).status,
    400,
    'no body: blank reason'
  )
  const armed = await call('/kill-switch/arm', {
    body: { reason: 'incident 7', operator: 'carol' },
    headers: auth(ALICE)
  })
  t.equal(armed.status, 200)
  t.same([armed.body.armed, armed.body.reason, armed.body.operator], [true, 'incident 7', 'carol'])
  t.match(armed.body.armedAt, /Z$/)
  const a = await svc.gate.admit('t', aiRequest({ message: 'harmless' }))
  t.same(a.admitted ? null : a.reason, 'incident 7')
  const chk = await call('/check', { body: { action: 'read' } })
  t.same([chk.body.allowed, chk.body.reason, chk.body.matched_policy], [false, 'incident 7', 'kill-switch'])
  const health = (await call('/health', { headers: { authorization: `Bearer ${ALICE}` } })).body
  t.same(health.killSwitch, {
    armed: true,
    reason: 'incident 7',
    operator: 'carol',
    principal: 'alice',
    armedAt: armed.body.armedAt
  })
  const listed = (await call('/policies')).body[0]
  t.same([listed.armed, listed.armedReason], [true, 'incident 7'])
  const op = await call('/kill-switch/arm', { body: { reason: 'again', operator: 42 }, headers: auth(ALICE) })
  t.equal(op.body.operator, 'alice', 'a non-string operator falls back to the principal')
  const dis = await call('/kill-switch/disarm', { method: 'POST', headers: auth(ALICE) })
  t.same([dis.status, dis.body], [200, { armed: false }])
  t.equal((await svc.gate.admit('t', aiRequest({ message: 'harmless' }))).admitted, true)
  const actions = tp.platform.audit.entries(50).map((e) => e.action)
  for (const a of ['governance.kill_switch.arm.invalid', 'governance.kill_switch.arm', 'governance.kill_switch.disarm'])
    t.ok(actions.includes(a), a)
})

t.test('health: kill switch, per-policy digests, dry-run counters, slos', async (t) => {
  const svc = governanceOf(tp.platform)!
  await svc.gate.admit('t', aiRequest({ message: 'a message longer than ten' }))
  const h = (await call('/health')).body
  t.same(Object.keys(h), ['generatedAt', 'killSwitch', 'policies', 'dryRuns', 'slos', 'policyFiles'])
  t.same(h.killSwitch, { armed: false })
  t.same(h.policies[2], {
    name: 'shadow',
    source: `yaml:${policies}`,
    version: '1.0',
    digest: policyDigest('shadow', `yaml:${policies}`, '1.0')
  })
  t.equal(h.dryRuns[0].wrappedPolicyName, 'shadow')
  t.ok(h.dryRuns[0].denies >= 1, 'the shadow deny is counted, the request admitted')
  t.same(h.slos, [])
})

t.test('reload: hot-swaps a swappable policy and names outgoing and incoming identity', async (t) => {
  const svc = governanceOf(tp.platform)!
  t.equal((await svc.gate.admit('t', aiRequest({ message: 'forbidden' }))).admitted, false)
  const r = await call('/reload', {
    body: {
      swapName: 'content',
      content: 'version: "2.0"\npolicies:\n  - {name: content-v2, type: deny-list, config: {phrases: [banned]}}\n'
    },
    headers: auth(ALICE)
  })
  t.equal(r.status, 200)
  t.same(r.body, {
    swapName: 'content',
    outgoing: { name: 'content', version: '1.0', source: `yaml:${policies}` },
    incoming: { name: 'content-v2', version: '2.0', source: 'yaml:admin-reload:content' },
    format: 'yaml'
  })
  t.equal((await svc.gate.admit('t', aiRequest({ message: 'forbidden' }))).admitted, true)
  const d = await svc.gate.admit('t', aiRequest({ message: 'banned' }))
  t.same(d.admitted ? null : [d.reason, d.policy.name], ['deny-list: request matched a denied phrase', 'content'])
  t.equal((await call('/policies')).body[1].delegateVersion, '2.0')
  const legacy = await call('/reload', {
    body: { swapName: 'content', yaml: 'policies:\n  - {name: v3, type: kill-switch}\n' },
    headers: auth(ALICE)
  })
  t.equal(legacy.body.incoming.name, 'v3', 'legacy yaml key accepted')
  t.ok(tp.platform.audit.entries(50).some((e) => e.action === 'governance.reload' && e.success))
})

t.test('reload errors are 400 with the reference messages, audited as .invalid', async (t) => {
  const cases: [unknown, string, string][] = [
    [{ content: 'x' }, 'swapName must not be blank', 'PLT_ERR_RELOAD_SWAP_NAME_BLANK'],
    [{ swapName: 'content', content: ' ' }, 'policy content must not be blank', 'PLT_ERR_RELOAD_CONTENT_BLANK'],
    [
      { swapName: 'nope', content: 'policies: []' },
      "no SwappablePolicy named 'nope' is installed",
      'PLT_ERR_RELOAD_UNKNOWN_SWAP'
    ],
    [
      { swapName: 'content', content: 'x', format: 'rego' },
      "no PolicyParser registered for format 'rego' — add a plugin or module that provides the 'rego' parser",
      'PLT_ERR_RELOAD_UNKNOWN_FORMAT'
    ],
    [{ swapName: 'content', content: 'policies: [' }, '', 'PLT_ERR_RELOAD_PARSE_FAILED'],
    [
      { swapName: 'content', content: 'version: "1"\n' },
      'yaml artifact yielded zero policies — reload aborted',
      'PLT_ERR_RELOAD_EMPTY'
    ]
  ]
  for (const [body, msg, code] of cases) {
    const r = await call('/reload', { body, headers: auth(ALICE) })
    t.equal(r.status, 400, code)
    t.equal(r.body.code, code)
    if (msg !== '') t.equal(r.body.error, msg)
    else t.match(r.body.error, /^yaml parse failed: /)
  }
  t.ok(tp.platform.audit.entries(50).some((e) => e.action === 'governance.reload.invalid'))
  t.equal((await call('/policies')).body[1].delegateVersion, 'embedded', 'nothing changed by failed reloads')
})

t.test('write gate: anonymous 401 before anything else; audited', async (t) => {
  for (const path of ['/reload', '/kill-switch/arm', '/kill-switch/disarm']) {
    const r = await call(path, { body: { swapName: 'content', content: 'x', reason: 'r' } })
    t.same(
      [r.status, r.body.error, r.body.code],
      [401, 'Authentication required for admin write operations', 'PLT_ERR_ADMIN_AUTH_REQUIRED'],
      path
    )
  }
  const actions = tp.platform.audit.entries(100).map((e) => e.action)
  for (const a of [
    'governance.reload.denied.anonymous',
    'governance.kill_switch.arm.denied.anonymous',
    'governance.kill_switch.disarm.denied.anonymous'
  ])
    t.ok(actions.includes(a), a)
})

t.test('write gate: flag off is 403; role and authorizer denials are 403', async (t) => {
  const off = await startTestPlatform(
    { 'platform.ai.governance.policy-files': [policies], 'platform.auth.tokens': tokens },
    { install }
  )
  t.teardown(off.close)
  const r = await call('/kill-switch/arm', { body: { reason: 'x' }, headers: auth(ALICE) }, off.url)
  t.same(
    [r.status, r.body.error, r.body.hint],
    [403, 'Admin write operations disabled', 'Set platform.admin.http-write-enabled=true to enable']
  )
  t.ok(off.platform.audit.entries(10).some((e) => e.action === 'governance.kill_switch.arm.denied.flag'))
  const role = await startTestPlatform(
    {
      'platform.ai.governance.policy-files': [policies],
      'platform.auth.tokens': tokens,
      'platform.admin.http-write-enabled': true,
      'platform.admin.required-role': 'ops'
    },
    { install }
  )
  t.teardown(role.close)
  const rr = await call('/kill-switch/arm', { body: { reason: 'x' }, headers: auth(BOB) }, role.url)
  t.same([rr.status, rr.body.error], [403, 'Forbidden: caller lacks required role'])
  t.equal((await call('/kill-switch/arm', { body: { reason: 'x' }, headers: auth(ALICE) }, role.url)).status, 200)
  const authz = await startTestPlatform(
    {
      'platform.ai.governance.policy-files': [policies],
      'platform.auth.tokens': tokens,
      'platform.admin.http-write-enabled': true,
      'platform.admin.authorizer': 'deny-all'
    },
    { install }
  )
  t.teardown(authz.close)
  const ra = await call('/reload', { body: { swapName: 'content', content: 'x' }, headers: auth(ALICE) }, authz.url)
  t.same([ra.status, ra.body.error], [403, 'Forbidden'])
})

t.test('no kill switch installed: arm and disarm are 409, audited as unavailable', async (t) => {
  const none = await startTestPlatform(
    { 'platform.auth.tokens': tokens, 'platform.admin.http-write-enabled': true },
    { install }
  )
  t.teardown(none.close)
  for (const p of ['/kill-switch/arm', '/kill-switch/disarm']) {
    const r = await call(p, { body: { reason: 'x' }, headers: auth(ALICE) }, none.url)
    t.same([r.status, r.body.error], [409, 'no KillSwitchPolicy installed on this framework'], p)
  }
  const actions = none.platform.audit.entries(10).map((e) => e.action)
  t.ok(actions.includes('governance.kill_switch.arm.unavailable'))
  t.ok(actions.includes('governance.kill_switch.disarm.unavailable'))
  const chk = await call('/check', { body: { action: 'x' } }, none.url)
  t.same(
    chk.body,
    {
      allowed: true,
      decision: 'allow',
      reason: '',
      matched_policy: null,
      matched_source: null,
      evaluation_ms: 0,
      dry_run: true
    },
    'no policies: unconfigured allow payload'
  )
  t.same((await call('/summary', {}, none.url)).body, { policyCount: 0, sources: [] })
})

t.test('platform.ai.governance.kill-switch.enabled installs one from code', async (t) => {
  const k = await startTestPlatform({ 'platform.ai.governance.kill-switch.enabled': true }, { install })
  t.teardown(k.close)
  t.same(
    (await call('/policies', {}, k.url)).body.map((p: { source: string }) => p.source),
    ['code:KillSwitchPolicy']
  )
})

t.test('governance disabled: 503 runs before the write gate; reads answer as uninstalled', async (t) => {
  const dis = await startTestPlatform({ 'platform.ai.governance.enabled': false }, { install })
  t.teardown(dis.close)
  for (const p of ['/reload', '/kill-switch/arm', '/kill-switch/disarm']) {
    const r = await call(p, { body: {} }, dis.url)
    t.same(
      [r.status, r.body.error, r.body.code],
      [503, 'governance controller not installed', 'PLT_ERR_GOVERNANCE_NOT_INSTALLED'],
      p
    )
  }
  t.same((await call('/health', {}, dis.url)).body, {
    killSwitch: { armed: false },
    policies: [],
    dryRuns: [],
    slos: []
  })
  t.same((await call('/check', { body: { action: 'x' } }, dis.url)).body, {
    allowed: true,
    decision: 'allow',
    reason: '',
    matched_policy: null,
    matched_source: null,
    evaluation_ms: 0,
    dry_run: true
  })
  t.same((await call('/policies', {}, dis.url)).body, [])
  t.equal(governanceOf(dis.platform), undefined)
})

t.test('http-read-auth-required gates every governance read except check', async (t) => {
  const ro = await startTestPlatform(
    { 'platform.admin.http-read-auth-required': true, 'platform.auth.tokens': tokens },
    { install }
  )
  t.teardown(ro.close)
  for (const p of ['/policies', '/summary', '/health', '/owasp', '/compliance', '/agt-verify']) {
    t.equal((await call(p, {}, ro.url)).status, 401, p)
    t.equal((await call(p, { headers: auth(BOB) }, ro.url)).status, 200, p)
  }
  t.equal((await call('/check', { body: {} }, ro.url)).status, 200)
  void url
})
