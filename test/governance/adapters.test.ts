import t from 'tap'
import pino from 'pino'
import { GovernanceService, GovernanceDecisionLog } from '../../runtime/governance/index.js'
import { GuardrailAsPolicy, PolicyAsGuardrail, type AiGuardrail } from '../../runtime/governance/guardrails.js'
import { aiRequest, type GovernancePolicy } from '../../runtime/contracts/index.js'
import { post, pre } from '../helpers/governance.js'

const svc = () =>
  new GovernanceService({ logger: pino({ level: 'silent' }), decisionLog: new GovernanceDecisionLog(10) })

t.test('GuardrailAsPolicy: pass, modify and block map to admit, transform and deny', async (t) => {
  const g: AiGuardrail = {
    name: 'shout',
    inspectRequest: (r) =>
      r.message === 'block'
        ? { result: 'block', reason: 'blocked' }
        : r.message === 'mod'
          ? { result: 'modify', request: { ...r, message: 'MOD' } }
          : { result: 'pass' },
    inspectResponse: async (text) =>
      text.includes('leak') ? { result: 'block', reason: 'leaked' } : { result: 'pass' }
  }
  const p = new GuardrailAsPolicy(g)
  t.same([p.name, p.source, p.className], ['shout', 'code:shout', 'GuardrailAsPolicy(shout)'])
  t.same(p.evaluate(pre('ok')), { decision: 'admit' })
  t.same(p.evaluate(pre('block')), { decision: 'deny', reason: 'blocked' })
  t.equal((p.evaluate(pre('mod')) as { request: { message: string } }).request.message, 'MOD')
  t.same(await p.evaluate(post('a leak')), { decision: 'deny', reason: 'leaked' })
  t.same(new GuardrailAsPolicy({ name: 'empty' }).evaluate(pre('x')), { decision: 'admit' })
})

t.test('PolicyAsGuardrail: deny blocks, transform modifies requests only, a throw blocks', async (t) => {
  const mk = (evaluate: GovernancePolicy['evaluate']): PolicyAsGuardrail =>
    new PolicyAsGuardrail({ name: 'p', source: 'code:p', version: '1', className: 'X', evaluate })
  t.same(mk(() => ({ decision: 'deny', reason: 'no' })).inspectRequest(aiRequest({ message: 'x' })), {
    result: 'block',
    reason: 'no'
  })
  t.same(
    mk((c) => ({ decision: 'transform', request: { ...c.request, message: 'y' } })).inspectRequest(
      aiRequest({ message: 'x' })
    ),
    { result: 'modify', request: aiRequest({ message: 'y' }) }
  )
  t.same(mk((c) => ({ decision: 'transform', request: c.request })).inspectResponse('r', aiRequest({ message: 'x' })), {
    result: 'pass'
  })
  t.same(mk(() => ({ decision: 'prefer', preferred: 'a', reason: 'b' })).inspectRequest(aiRequest({ message: 'x' })), {
    result: 'pass'
  })
  t.same(
    mk(() => {
      throw new Error('bad')
    }).inspectRequest(aiRequest({ message: 'x' })),
    { result: 'block', reason: 'bad' }
  )
  t.same(
    await mk(async () => {
      throw new Error('later')
    }).inspectRequest(aiRequest({ message: 'x' })),
    { result: 'block', reason: 'later' }
  )
})

t.test('guardrails run before every policy', async (t) => {
  const s = svc()
  const order: string[] = []
  s.addPolicy({
    name: 'pol',
    source: 'code:pol',
    version: '1',
    className: 'X',
    evaluate: () => {
      order.push('policy')
      return { decision: 'admit' }
    }
  })
  s.addGuardrail({
    name: 'guard',
    inspectRequest: () => {
      order.push('guardrail')
      return { result: 'pass' }
    }
  })
  await s.gate.admit('t', aiRequest({ message: 'm' }))
  t.same(order, ['guardrail', 'policy'])
  t.same(
    s.chain.policies.map((p) => p.name),
    ['guard', 'pol']
  )
})

t.test('untraced gate: each entry times its policy alone, in chain order, with the request it saw', async (t) => {
  const s = svc()
  // a clock that moves only when told: policies take set times, and recording an entry takes a
  // whole unit, which no policy's evaluation_ms may include
  let clock = 0
  const now = performance.now
  performance.now = () => clock
  t.teardown(() => {
    performance.now = now
  })
  s.decisionLog.onRecord(() => {
    clock += 1
  })
  let recordedBeforeAsync = -1
  const timed = (name: string, ms: number, decide: GovernancePolicy['evaluate']): GovernancePolicy => ({
    name,
    source: `code:${name}`,
    version: '1',
    className: 'Timed',
    evaluate: (ctx) => {
      clock += ms
      return decide(ctx)
    }
  })
  s.setSource('code', [
    timed('first', 0.002, () => ({ decision: 'admit' })),
    timed('rewrite', 0.003, (c) => ({ decision: 'transform', request: { ...c.request, message: 'rewritten' } })),
    timed('advisor', 0.005, () => ({ decision: 'prefer', preferred: 'P', reason: 'R' })),
    timed('sandboxed', 0.007, async () => {
      await Promise.resolve()
      recordedBeforeAsync = s.decisionLog.size
      return { decision: 'admit' }
    }),
    timed('last', 0.011, () => ({ decision: 'admit' }))
  ])
  const a = await s.gate.admit('test', aiRequest({ message: 'original', userId: 'u' }))
  t.equal(a.admitted, true)
  const entries = s.decisionLog.recent(5).reverse()
  t.same(
    entries.map((e) => [e.policy_name, e.decision, e.evaluation_ms, e.context_snapshot.message]),
    [
      ['first', 'admit', 0.002, 'original'],
      ['rewrite', 'transform', 0.003, 'rewritten'],
      ['advisor', 'prefer', 0.005, 'rewritten'],
      ['sandboxed', 'admit', 0.007, 'rewritten'],
      ['last', 'admit', 0.011, 'rewritten']
    ]
  )
  t.equal(entries[2]!.context_snapshot.preferred, 'P', 'a prefer carries what it prefers')
  t.equal(entries[3]!.context_snapshot.preferred, undefined, 'and only it')
  t.equal(recordedBeforeAsync, 3, 'while a policy answering with a promise is awaited, what was decided is in the log')
})
