import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpanStatusCode } from '@opentelemetry/api'
import { startTestPlatform } from '../helpers/platform.js'
import { recordSpans } from '../helpers/span-recorder.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest, isoNow, type GovernancePolicy, type PolicyContext } from '../../runtime/contracts/index.js'
import { isoOf } from '../../runtime/contracts/iso-now.js'
import { POLICIES_PROPERTY } from '../../runtime/governance/chain.js'
import { coerce } from '../../runtime/governance/audit-entry.js'
import { KillSwitchPolicy } from '../../runtime/governance/types/index.js'
import { DryRunPolicy, SwappablePolicy } from '../../runtime/governance/wrappers.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const installGovernance = (p: Platform) => installAreas(p, [scopeArea, governanceArea])

const spans = recordSpans()

const dir = mkdtempSync(join(tmpdir(), 'gov-gate-'))
const file = join(dir, 'policies.yaml')
writeFileSync(
  file,
  `version: "3"
policies:
  - name: no-secrets
    type: deny-list
    config: {phrases: [secret]}
  - name: prefer-py3
    type: preference
    config: {phrases: [python 2], prefer: Python 3, reason: EOL}
  - name: slots
    type: concurrency-limit
    config: {max-concurrent: 1}
`
)

const tp = await startTestPlatform(
  {
    'platform.ai.governance.policy-files': [file],
    'platform.log-level': 'info',
    'platform.ai.governance.decision-log.capacity': 50
  },
  { install: installGovernance }
)
t.teardown(tp.close)
const svc = governanceOf(tp.platform)!
const gate = svc.gate

const code = (
  name: string,
  evaluate: (c: PolicyContext) => ReturnType<GovernancePolicy['evaluate']>
): GovernancePolicy => ({ name, source: `code:${name}`, version: '1', className: 'Test', evaluate })

t.test('the live chain: files and code merged, de-duplicated by name, mirrored in the property bag', async (t) => {
  svc.addPolicy(code('no-secrets', () => ({ decision: 'deny', reason: 'code wins' })))
  const names = svc.chain.policies.map((p) => `${p.name}@${p.source}`)
  t.same(names, ['no-secrets@code:no-secrets', 'prefer-py3@yaml:' + file, 'slots@yaml:' + file])
  t.equal(tp.platform.properties.get(POLICIES_PROPERTY), svc.chain.policies)
  t.ok(tp.logs.some((l) => String(l.msg).includes("duplicate governance policy name 'no-secrets'")))
  svc.setSource('code', [])
  t.same(
    svc.chain.policies.map((p) => p.name),
    ['no-secrets', 'prefer-py3', 'slots']
  )
  t.equal(svc.chain.policies[0]!.source, 'yaml:' + file)
})

t.test('admit: every evaluated policy writes an AuditEntry; preferences carried', async (t) => {
  const before = svc.decisionLog.size
  const a = await gate.admit(
    'test',
    aiRequest({ message: 'python 2 help', userId: 'u1', sessionId: 's1', metadata: { obj: { a: 1 }, n: 2 } })
  )
  t.equal(a.admitted, true)
  if (!a.admitted) return
  t.same(
    a.preferences.map((p) => [p.name, p.preferred, p.reason]),
    [['prefer-py3', 'Python 3', 'EOL']]
  )
  t.equal(svc.decisionLog.size, before + 3)
  const [slots, pref, deny] = svc.decisionLog.recent(3)
  t.same(Object.keys(deny!), [
    'timestamp',
    'policy_name',
    'policy_source',
    'policy_version',
    'decision',
    'reason',
    'evaluation_ms',
    'context_snapshot'
  ])
  t.equal(deny!.decision, 'admit')
  t.equal(deny!.policy_version, '3')
  t.equal(pref!.decision, 'prefer')
  t.equal(pref!.reason, 'EOL')
  t.equal(pref!.context_snapshot.preferred, 'Python 3')
  t.equal(slots!.policy_name, 'slots')
  t.same(deny!.context_snapshot, {
    phase: 'pre_admission',
    message: 'python 2 help',
    user_id: 'u1',
    session_id: 's1',
    obj: '{"a":1}',
    n: 2
  })
  t.match(deny!.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.type(deny!.evaluation_ms, 'number')
  await gate.afterResponse('test', aiRequest({ message: 'python 2 help', userId: 'u1' }), 'ok')
})

t.test('timestamps: the text of the second with the milliseconds appended is toISOString', async (t) => {
  const at = [
    Date.UTC(2026, 10, 29, 8, 0, 59, 998),
    -1,
    -1001,
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1),
    Date.UTC(-1, 0, 1),
    1.5
  ]
  for (let i = 0; i < 3000; i++) at.push(Date.UTC(2026, 0, 1) + i * 7 + (i % 5) * 1000)
  for (const ms of at) t.equal(isoOf(ms), new Date(ms).toISOString(), String(ms))
  t.equal(isoNow().length, 24)
})

t.test('snapshot message is cut to 200 characters plus an ellipsis', async (t) => {
  await gate.admit('test', aiRequest({ message: 'x'.repeat(500), userId: 'trunc' }))
  const e = svc.decisionLog.recent(1)[0]!
  t.equal(e.context_snapshot.message, 'x'.repeat(200) + '…')
  await gate.afterResponse('test', aiRequest({ message: 'm', userId: 'trunc' }), 'r'.repeat(300))
  t.equal(svc.decisionLog.recent(1)[0]!.context_snapshot.response_preview, 'r'.repeat(200) + '…')
})

t.test("snapshot: the client's claims under client.<key>, after the facts; a fact of that name wins", async (t) => {
  for (let turn = 0; turn < 2; turn++) {
    await gate.admit(
      'test',
      aiRequest({
        message: 'hi',
        userId: 'claims',
        metadata: { 'client.tier': 'gold' },
        clientMetadata: { channel: 'web', tier: 'platinum', list: ['a'] }
      })
    )
    const snapshot = svc.decisionLog.recent(1)[0]!.context_snapshot
    t.same(Object.keys(snapshot), ['phase', 'message', 'user_id', 'client.tier', 'client.channel', 'client.list'])
    t.same(snapshot, {
      phase: 'pre_admission',
      message: 'hi',
      user_id: 'claims',
      'client.tier': 'gold',
      'client.channel': 'web',
      'client.list': '["a"]'
    })
    await gate.afterResponse('test', aiRequest({ message: 'hi', userId: 'claims' }), 'ok')
  }
})

t.test('deny: stops the chain, logs the reference line, span status ERROR', async (t) => {
  spans.length = 0
  const a = await gate.admit('test', aiRequest({ message: 'the secret plan' }))
  t.same(a, {
    admitted: false,
    reason: 'deny-list: request matched a denied phrase',
    policy: { name: 'no-secrets', source: 'yaml:' + file, version: '3' }
  })
  t.equal(spans.length, 1, 'later policies not evaluated')
  t.same(spans[0]!.attributes, {
    'policy.name': 'no-secrets',
    'policy.source': 'yaml:' + file,
    'policy.version': '3',
    'policy.phase': 'pre_admission',
    'policy.decision': 'deny',
    'policy.reason': 'deny-list: request matched a denied phrase'
  })
  t.equal(spans[0]!.name, 'governance.policy.evaluate')
  t.equal(spans[0]!.status?.code, SpanStatusCode.ERROR)
  t.ok(spans[0]!.ended)
  t.ok(
    tp.logs.some(
      (l) =>
        l.msg ===
        `Request denied by policy no-secrets (source=yaml:${file}, version=3): deny-list: request matched a denied phrase`
    )
  )
})

t.test('a throwing policy, an invalid decision and a rejected promise all deny (fail closed)', async (t) => {
  svc.setSource('code', [
    code('boom', () => {
      throw new Error('kaput')
    })
  ])
  t.same(await gate.admit('test', aiRequest({ message: 'hi' })), {
    admitted: false,
    reason: 'kaput',
    policy: { name: 'boom', source: 'code:boom', version: '1' },
    failed: true
  })
  t.equal(svc.decisionLog.recent(1)[0]!.decision, 'error')
  svc.setSource('code', [code('weird', () => ({ decision: 'maybe' }) as never)])
  t.same(await gate.admit('test', aiRequest({ message: 'hi' })), {
    admitted: false,
    reason: 'policy returned an invalid decision',
    policy: { name: 'weird', source: 'code:weird', version: '1' },
    failed: true
  })
  // an error that says admit is still an error, whatever it says
  svc.setSource('code', [code('error-admits', () => Object.assign(new Error('x'), { decision: 'admit' }) as never)])
  const said = await gate.admit('test', aiRequest({ message: 'hi' }))
  t.same(said.admitted ? null : [said.reason, said.failed], ['policy returned an invalid decision', true])
  t.equal(svc.decisionLog.recent(1)[0]!.decision, 'error')
  svc.setSource('code', [
    code('async-boom', async () => {
      throw new Error('later')
    })
  ])
  const r = gate.admit('test', aiRequest({ message: 'hi' }))
  t.ok(r instanceof Promise, 'async policies make the run async')
  t.same(await r, {
    admitted: false,
    reason: 'later',
    policy: { name: 'async-boom', source: 'code:async-boom', version: '1' },
    failed: true
  })
  svc.setSource('code', [])
})

t.test('synchronous chains answer synchronously', async (t) => {
  const r = gate.admit('test', aiRequest({ message: 'plain' }))
  t.notOk(r instanceof Promise)
  await gate.afterResponse('test', aiRequest({ message: 'plain' }), '')
})

t.test('transform replaces the request for later policies; post-response transform is ignored', async (t) => {
  let seen = ''
  svc.setSource('code', [
    code('rewrite', (c) =>
      c.phase === 'PRE_ADMISSION'
        ? { decision: 'transform', request: { ...c.request, message: 'rewritten' } }
        : { decision: 'transform', request: c.request }
    ),
    code('observer', async (c) => {
      seen = c.request.message
      return { decision: 'admit' }
    })
  ])
  const a = await gate.admit('test', aiRequest({ message: 'original' }))
  t.equal(a.admitted && a.request.message, 'rewritten')
  t.equal(seen, 'rewritten')
  const entries = svc.decisionLog.recent(5)
  t.equal(entries.find((e) => e.policy_name === 'rewrite')!.decision, 'transform')
  const p = await gate.afterResponse('test', aiRequest({ message: 'original' }), 'resp')
  t.equal(p.admitted, true)
  const postEntry = svc.decisionLog.recent(5).find((e) => e.policy_name === 'rewrite')!
  t.same([postEntry.decision, postEntry.reason], ['admit', 'post-response transform ignored'])
  t.ok(tp.logs.some((l) => String(l.msg).includes('returned Transform after the response')))
  svc.setSource('code', [])
})

t.test('a deny later in the chain releases the concurrency slot taken earlier', async (t) => {
  svc.setSource('code', [])
  svc.chain.setSource('tail', [
    code('late-deny', (c) =>
      c.request.message === 'deny me' ? { decision: 'deny', reason: 'late' } : { decision: 'admit' }
    )
  ])
  for (let i = 0; i < 3; i++) {
    const a = await gate.admit('test', aiRequest({ message: 'deny me', userId: 'slot' }))
    t.same(a.admitted ? 'admitted' : a.reason, 'late', 'never "concurrency limit"')
  }
  svc.chain.removeSource('tail')
})

t.test('post-response evaluates every policy; the first deny wins', async (t) => {
  let evaluated = 0
  svc.setSource('code', [
    code('p1', () => ({ decision: 'deny', reason: 'first' })),
    code('p2', () => {
      evaluated++
      return { decision: 'admit' }
    })
  ])
  const a = await gate.afterResponse('test', aiRequest({ message: 'm' }), 'r')
  t.same(a.admitted ? null : a.reason, 'first')
  t.equal(evaluated, 1)
  svc.setSource('code', [])
})

t.test('an armed kill switch denies every admission with the arm reason', async (t) => {
  const ks = new KillSwitchPolicy()
  svc.chain.setSource('ks', [ks])
  ks.arm('maintenance', 'ops')
  const a = await gate.admit('test', aiRequest({ message: 'the secret' }))
  t.same(a.admitted ? null : [a.reason, a.policy.name], ['maintenance', 'kill-switch'])
  ks.disarm()
  const held = await gate.admit('test', aiRequest({ message: 'in flight', userId: 'ks-slot' }))
  t.equal(held.admitted, true)
  ks.arm('mid-turn', 'ops')
  const after = await gate.afterResponse('test', aiRequest({ message: 'in flight', userId: 'ks-slot' }), 'r')
  t.same(after.admitted ? null : after.reason, 'mid-turn', 'the armed reason wins after the response too')
  ks.disarm()
  t.equal(
    (await gate.admit('test', aiRequest({ message: 'again', userId: 'ks-slot' }))).admitted,
    true,
    'the slot was released while armed'
  )
  await gate.afterResponse('test', aiRequest({ message: 'again', userId: 'ks-slot' }), '')
  t.equal((await gate.admit('test', aiRequest({ message: 'fine' }))).admitted, true)
  await gate.afterResponse('test', aiRequest({ message: 'fine' }), '')
  svc.chain.removeSource('ks')
})

t.test("a wrapper's identity and agent are its delegate's at every evaluation, a plain policy's its own", async (t) => {
  const slot = new SwappablePolicy(
    'slot',
    'code:slot',
    '1',
    code('inner-a', () => ({ decision: 'admit' }))
  )
  const shadow = new DryRunPolicy({ ...code('shadow-a', () => ({ decision: 'deny', reason: 'no' })), agent: 'nobody' })
  const plain = code('plain', () => ({ decision: 'admit' }))
  svc.chain.setSource('wrapped', [slot, shadow, plain])
  let seen: string[] = []
  svc.decisionLog.onRecord((e) => {
    if (e.context_snapshot.message === 'wrapped') seen.push(`${e.policy_name}@${e.policy_version}`)
  })
  const logged = async (): Promise<string[]> => {
    seen = []
    t.equal((await gate.admitOnce('test', aiRequest({ message: 'wrapped', agentId: 'bot' }))).admitted, true)
    return seen.filter((n) => /^(slot|shadow-a|plain)@/.test(n))
  }
  t.same(await logged(), ['slot@1', 'plain@1'], "the shadow governs another agent's turns: skipped")
  slot.swap({ ...code('inner-b', () => ({ decision: 'admit' })), agent: 'nobody' })
  const inner = shadow.delegate as { agent?: string | null; version: string }
  inner.agent = null
  inner.version = '2'
  t.same(await logged(), ['shadow-a@2', 'plain@1'], 'the slot now holds a policy of another agent; the shadow joins')
  svc.chain.removeSource('wrapped')
})

t.test('decisions by subject: conversation, then session, then user', async (t) => {
  await gate.admit('test', aiRequest({ message: 'secret 1', userId: 'subj', sessionId: 'sess-a' }))
  await gate.admit(
    'test',
    aiRequest({ message: 'python 2 and secret', userId: 'subj', sessionId: 'sess-b', conversationId: 'conv-1' })
  )
  const byConv = svc.decisionLog.forSubject({ conversationId: 'conv-1', sessionId: 'sess-a', userId: 'subj' })
  t.same(
    byConv.map((e) => e.context_snapshot.conversation_id),
    ['conv-1']
  )
  t.same(
    svc.decisionLog
      .forSubject({ conversationId: 'conv-none', sessionId: 'sess-a', userId: 'subj' })
      .map((e) => e.context_snapshot.session_id),
    ['sess-a']
  )
  t.equal(svc.decisionLog.forSubject({ userId: 'subj' }).length, 2)
  t.same(svc.decisionLog.forSubject({}), [])
})

t.test('the decision log survives a restart through LMDB', async (t) => {
  const data = mkdtempSync(join(tmpdir(), 'gov-lmdb-'))
  const a = await startTestPlatform(
    { 'platform.data-dir': data, 'platform.ai.governance.policy-files': [file] },
    { install: installGovernance }
  )
  await governanceOf(a.platform)!.gate.admit('x', aiRequest({ message: 'persist me secret' }))
  await a.close()
  const b = await startTestPlatform(
    { 'platform.data-dir': data, 'platform.ai.governance.policy-files': [file] },
    { install: installGovernance }
  )
  t.teardown(b.close)
  const e = governanceOf(b.platform)!.decisionLog.recent(1)[0]!
  t.equal(e.context_snapshot.message, 'persist me secret')
})

t.test('a broken policy file stops start-up with a message naming it', async (t) => {
  const bad = join(dir, 'bad.yaml')
  writeFileSync(bad, 'policies:\n  - {name: ok, type: kill-switch}\n  - {name: broken, type: rate-limit}\n')
  await t.rejects(startTestPlatform({ 'platform.ai.governance.policy-files': [bad] }, { install: installGovernance }), {
    message: `failed to build policies[1] ('broken') in yaml:${bad}: rate-limit requires a positive 'limit' under config`
  })
  await t.rejects(
    startTestPlatform(
      { 'platform.ai.governance.policy-files': [join(dir, 'missing.yaml')] },
      { install: installGovernance }
    ),
    /cannot read policy file .*missing.yaml: ENOENT/
  )
})

t.test('recent() past the ring continues from LMDB below the oldest ring entry', async (t) => {
  const data = mkdtempSync(join(tmpdir(), 'gov-ring-'))
  const a = await startTestPlatform(
    {
      'platform.data-dir': data,
      'platform.ai.governance.policy-files': [file],
      'platform.ai.governance.decision-log.capacity': 3
    },
    { install: installGovernance }
  )
  t.teardown(a.close)
  const s = governanceOf(a.platform)!
  s.setSource('yaml:' + file, [])
  s.addPolicy(code('only', () => ({ decision: 'admit' })))
  for (let i = 0; i < 8; i++) await s.gate.admit('x', aiRequest({ message: `m${i}` }))
  t.same(
    s.decisionLog.recent(2).map((e) => e.context_snapshot.message),
    ['m7', 'm6']
  )
  await new Promise((r) => setTimeout(r, 100))
  t.same(
    s.decisionLog.recent(6).map((e) => e.context_snapshot.message),
    ['m7', 'm6', 'm5', 'm4', 'm3', 'm2']
  )
  t.equal(s.decisionLog.recent(100).length, 8)
})

t.test('snapshot: a list is its JSON, cut like any other value, whichever way it is built', async (t) => {
  const withToJSON = Object.assign(['a'], { toJSON: () => 'custom' })
  const lists: unknown[][] = [
    [],
    ['customer'],
    ['admin', 'ops', 'a b', '~!#$%&()*+,-./:;<=>?@[]^_`{|}'],
    ['say "hi"'],
    ['back\\slash'],
    ['tab\there', 'nl\n'],
    ['é', '☃', '\ud800'],
    ['x', 1, null, true],
    // eslint-disable-next-line no-sparse-arrays
    [, 'hole'],
    withToJSON,
    Array.from({ length: 60 }, (_, i) => `role-${i}`)
  ]
  for (const l of lists) {
    const json = JSON.stringify(l)
    t.equal(coerce(l), json.length > 200 ? json.slice(0, 200) + '…' : json, json.slice(0, 40))
  }
})
