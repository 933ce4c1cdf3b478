// Fleet governance from real coordinator turns: the policy chain on every dispatch (deny, the
// per-argument transform, a throwing policy failing closed), decisions in the decision log, the
// armed kill switch, interceptors in order; commitment records signed and verified.
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GOVERNANCE } from '../../runtime/governance/index.js'
import { FLEET } from '../../runtime/fleet/index.js'
import { type AgentCall } from '../../runtime/fleet/fleet-types.js'
import { FLEET_AGENTS, admin, ask, askHidden, fleetPlatform } from './helpers.js'

// FLEET_AGENTS plus a policy type that throws on "explode"
const source =
  `import { policyType, admit } from 'uws-agent-platform/sdk'\n` +
  FLEET_AGENTS.replace(
    'export default definePlugin({\n  agents: [',
    `export default definePlugin({
  policyTypes: [policyType({ type: 'exploder', evaluate: (c) => {
    if (c.request.message.includes('explode')) throw new Error('boom')
    return admit()
  } })],
  agents: [`
  )
const policies = join(mkdtempSync(join(tmpdir(), 'fleet-policies-')), 'policies.yaml')
writeFileSync(
  policies,
  `version: "3"
policies:
  - name: no-forbidden
    type: deny-list
    config: {phrases: [forbidden]}
  - name: pii
    type: pii-redaction
  - name: exploder
    type: exploder
`
)
const TOKENS = [{ token: 'alice-token-0123456789abcdef', principal: 'alice', roles: ['admin'] }]
const tp = await fleetPlatform(
  {
    'platform.ai.governance.policy-files': [policies],
    'platform.ai.governance.kill-switch.enabled': true,
    'platform.ai.governance.commitment-records.enabled': true,
    'platform.auth.tokens': TOKENS
  },
  'inline',
  source
)
t.teardown(tp.close)
const decisions = async (): Promise<any[]> => (await admin(tp.url, '/governance/decisions?limit=500')).body

t.test('a deny policy blocks a dispatch: the agent never runs, the decision is logged', async (t) => {
  const a = await askHidden(tp.url, 'boss', 'call', 'count', undefined, { message: 'a forbidden question' })
  t.match(a.result, {
    success: false,
    durationMs: 0,
    text: 'fleet-interceptor denied: deny-list: request matched a denied phrase'
  })
  const d = (await decisions()).find(
    (e) => e.policy_name === 'no-forbidden' && e.context_snapshot['fleet.dispatch.agent'] === 'count'
  )
  t.match(d, {
    decision: 'deny',
    context_snapshot: {
      phase: 'pre_admission',
      message: 'run {"message":"a forbidden question"}',
      'fleet.dispatch.skill': 'run',
      'fleet.coordinationId': a.coordinationId
    }
  })
  // count never ran: its first run answers 1
  t.equal((await ask(tp.url, 'boss', 'call', 'count')).result.text, 'count 1')
})

t.test('a transform rewrites the string argument it changed, the others stay', async (t) => {
  const seen: AgentCall[] = []
  const remove = tp.platform.area(FLEET).addInterceptor({
    name: 'recorder',
    before: (c) => {
      seen.push(c)
      return { kind: 'proceed' }
    }
  })
  t.teardown(remove)
  const a = await askHidden(tp.url, 'boss', 'call', 'say', 'mail', { to: 'bob@example.com', n: 2, note: 'hi' })
  t.equal(seen.length, 1, 'an interceptor registered later sees the rewritten call')
  t.match(seen[0]!.args, { n: 2, note: 'hi' })
  t.notMatch(seen[0]!.args.to, /bob@example\.com/)
  t.match(a.result.text, /^mail \{"to":"[^"]+","n":2,"note":"hi"\}$/)
  t.notMatch(a.result.text, /bob@example/)
  t.ok(
    (await decisions()).some(
      (e) => e.policy_name === 'pii' && e.decision === 'transform' && e.context_snapshot['fleet.dispatch.arg'] === 'to'
    ),
    'the per-argument run is logged with fleet.dispatch.arg'
  )
})

t.test('a throwing policy fails closed', async (t) => {
  const a = await askHidden(tp.url, 'boss', 'call', 'say', undefined, { message: 'please explode' })
  t.match(a.result, { success: false, text: "fleet-interceptor denied: policy 'exploder' evaluation failed" })
})

t.test('interceptors run in order: a deny stops the chain, a throwing one denies', async (t) => {
  const fleet = tp.platform.area(FLEET)
  const order: string[] = []
  const off = [
    fleet.addInterceptor({
      name: 'first',
      before: (c) => {
        order.push('first')
        return c.agent === 'count' ? { kind: 'deny', reason: 'no counting today' } : { kind: 'proceed' }
      }
    }),
    fleet.addInterceptor({
      name: 'second',
      before: (c) => {
        order.push('second')
        if (c.args.message === 'crash') throw new Error('interceptor bug')
        return { kind: 'rewrite', call: { ...c, args: { message: 'rewritten' } } }
      }
    })
  ]
  t.teardown(() => off.forEach((f) => f()))
  t.match((await ask(tp.url, 'boss', 'call', 'count')).result, {
    success: false,
    text: 'fleet-interceptor denied: no counting today'
  })
  t.same(order, ['first'])
  t.equal((await ask(tp.url, 'boss', 'call', 'say', undefined, { message: 'x' })).result.text, 'rewritten')
  t.match((await ask(tp.url, 'boss', 'call', 'say', undefined, { message: 'crash' })).result, {
    text: "fleet-interceptor denied: interceptor 'second' failed: interceptor bug"
  })
})

t.test('commitments: the gate outcome, started, completed; signed, verified, journaled', async (t) => {
  const a = await ask(tp.url, 'boss', 'call', 'say', 'greet', { message: 'hello' })
  const listed = (await admin(tp.url, '/governance/commitments?limit=50')).body.filter(
    (r: any) => r.coordinationId === a.coordinationId
  )
  t.same(
    listed.map((r: any) => r.outcome),
    ['completed', 'started', 'admit'],
    'newest first'
  )
  for (const r of listed)
    t.match(r, {
      issuer: 'coordinator:boss',
      subject: 'say',
      scope: 'greet',
      principal: 'anonymous',
      properties: { message: 'hello' },
      signed: true,
      verified: true,
      proof: { scheme: 'Ed25519', keyId: /^ed25519:[0-9a-f]{16}$/ }
    })
  const journal = (await admin(tp.url, `/journal/${a.coordinationId}`)).body
  const dispatched = journal.find((e: any) => e.type === 'AgentDispatched')
  const recorded = journal.filter((e: any) => e.type === 'CommitmentRecorded')
  t.same(
    recorded.map((e: any) => e.outcome),
    ['admit', 'started', 'completed']
  )
  for (const e of recorded)
    t.match(e, {
      parentEventId: dispatched.eventId,
      subject: 'say',
      issuer: 'coordinator:boss',
      scope: 'greet',
      signatureScheme: 'Ed25519',
      signatureKeyId: /^ed25519:/,
      signed: true
    })
  // a denied dispatch commits its deny only
  const d = await askHidden(tp.url, 'boss', 'call', 'say', undefined, { message: 'forbidden' })
  const denied = (await admin(tp.url, '/governance/commitments?limit=50')).body.filter(
    (r: any) => r.coordinationId === d.coordinationId
  )
  t.same(
    denied.map((r: any) => r.outcome),
    ['deny']
  )
})

t.test("the coordinator's principal carries into its dispatches", async (t) => {
  const { postTurn } = await import('../ai/agent-clients.js')
  const r = await postTurn(
    tp.url,
    '/platform/agent/boss',
    JSON.stringify({ message: JSON.stringify({ op: 'call', params: ['say', 'run', { message: 'who' }] }) }),
    { authorization: `Bearer ${TOKENS[0]!.token}` }
  )
  const id = r.frames.find((f) => f.data?.stepName === 'executing')!.data.data.coordinationId
  const records = (await admin(tp.url, '/governance/commitments?limit=50')).body.filter(
    (x: any) => x.coordinationId === id
  )
  t.ok(records.length === 3 && records.every((x: any) => x.principal === 'alice'))
  t.ok(
    (await decisions()).some(
      (e) => e.context_snapshot['fleet.coordinationId'] === id && e.context_snapshot.user_id === 'alice'
    )
  )
})

t.test('an armed kill switch denies every dispatch', async (t) => {
  const ks = tp.platform.area(GOVERNANCE).killSwitch()!
  ks.arm('incident 42', 'ops')
  t.teardown(() => ks.disarm())
  const r = await tp.platform
    .area(FLEET)
    .dispatcher.call(
      { coordinationId: 'coord-drill', coordinator: 'boss', principal: 'ops' },
      { agent: 'say', skill: 'run', args: { message: 'x' } }
    )
  t.match(r, { success: false, durationMs: 0, text: 'fleet-interceptor denied: incident 42' })
})
