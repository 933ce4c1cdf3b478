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
