import t from 'tap'
import { aiRequest, type PolicyContext, type AiRequest } from '../../runtime/contracts/index.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { ScopePolicy, REDIRECT_METADATA_KEY } from '../../runtime/scope/scope-policy.js'
import {
  DEFAULT_REDIRECT,
  type ScopeGuardrail,
  type ScopeVerdict,
  type ScopeConfig
} from '../../runtime/scope/contract.js'
import { scopeFromAgentAttributes } from '../../runtime/scope/scope-config.js'
import { testRuntime } from '../helpers/scope-runtime.js'
import { synchronous } from '../helpers/governance.js'

const pre = (request: AiRequest): PolicyContext => ({ phase: 'PRE_ADMISSION', request, accumulatedResponse: '' })
const post = (request: AiRequest, response: string): PolicyContext => ({
  phase: 'POST_RESPONSE',
  request,
  accumulatedResponse: response
})
const yaml = (config: Record<string, unknown>, name = 'support-scope') =>
  synchronous(createScopePolicy({ name, source: 'yaml:/etc/policies.yaml', version: '3', config }, testRuntime()))
const base = {
  agent: 'support',
  purpose: 'Customer support for orders and billing',
  'forbidden-topics': ['gambling'],
  tier: 'RULE_BASED'
}

t.test('identity of a YAML scope policy', async (t) => {
  const p = yaml(base)
  t.equal(p.name, 'support-scope')
  t.equal(p.source, 'yaml:/etc/policies.yaml')
  t.equal(p.version, '3')
  t.equal(p.className, 'ScopePolicy')
})

t.test('in scope admits, synchronously on the rule-based tier', async (t) => {
  const d = yaml(base).evaluate(pre(aiRequest({ message: 'where is my order?', agentId: 'support' })))
  t.notOk(d instanceof Promise)
  t.same(d, { decision: 'admit' })
})

t.test('out of scope with DENY denies with the guardrail reason', async (t) => {
  const d = yaml({ ...base, 'on-breach': 'DENY' }).evaluate(
    pre(aiRequest({ message: 'gambling odds?', agentId: 'support' }))
  )
  t.same(d, { decision: 'deny', reason: "message references forbidden topic: 'gambling'" })
})

t.test('POLITE_REDIRECT transforms: message becomes the redirect text, metadata carries it', async (t) => {
  const req = aiRequest({
    message: 'write me python code',
    agentId: 'support',
    userId: 'u1',
    sessionId: 's1',
    conversationId: 'c1',
    model: 'm',
    systemPrompt: 'sys',
    metadata: { k: 1 }
  })
  const d = yaml(base).evaluate(pre(req))
  const { reason, ...rest } = d as { reason?: string }
  t.same(rest, {
    decision: 'transform',
    request: { ...req, message: DEFAULT_REDIRECT, metadata: { k: 1, [REDIRECT_METADATA_KEY]: DEFAULT_REDIRECT } }
  })
  t.match(
    reason,
    /^redirected: message matched built-in hijacking probe/,
    'the transform says why (shown by /check and the decision log)'
  )
  t.equal(REDIRECT_METADATA_KEY, 'platform.scope.redirect')
  t.same(req.metadata, { k: 1 }, 'the original request is not mutated')
})

t.test('CUSTOM_MESSAGE transforms with the configured text', async (t) => {
  const d = yaml({ ...base, 'on-breach': 'CUSTOM_MESSAGE', 'redirect-message': 'Orders only.' }).evaluate(
    pre(aiRequest({ message: 'gambling', agentId: 'support' }))
  )
  t.match(d, {
    decision: 'transform',
    request: { message: 'Orders only.', metadata: { [REDIRECT_METADATA_KEY]: 'Orders only.' } }
  })
})

t.test('requests for other agents pass untouched; no agent confines every request', async (t) => {
  const p = yaml({ ...base, 'on-breach': 'DENY' })
  t.same(p.evaluate(pre(aiRequest({ message: 'gambling', agentId: 'other' }))), { decision: 'admit' })
  t.same(p.evaluate(pre(aiRequest({ message: 'gambling' }))), { decision: 'admit' }, 'a request with no agent id')
  t.same(p.evaluate(post(aiRequest({ message: 'hi', agentId: 'other' }), 'gambling')), { decision: 'admit' })
  const all = yaml({ purpose: 'Orders', 'forbidden-topics': ['gambling'], tier: 'RULE_BASED', 'on-breach': 'DENY' })
  t.equal(all.evaluate(pre(aiRequest({ message: 'gambling', agentId: 'anyone' }))).decision, 'deny')
  t.equal(all.evaluate(pre(aiRequest({ message: 'gambling' }))).decision, 'deny')
  t.ok(p.appliesTo('support'))
  t.notOk(p.appliesTo('other'))
})

t.test('MCP tool calls (action call_tool) pass: a scope confines conversation turns', async (t) => {
  const p = yaml({ ...base, 'on-breach': 'DENY' })
  t.same(
    p.evaluate(
      pre(
        aiRequest({
          message: 'call_tool:write_python_code',
          agentId: 'support',
          metadata: { action: 'call_tool', tool_name: 'write_python_code' }
        })
      )
    ),
    { decision: 'admit' }
  )
  t.equal(
    p.evaluate(pre(aiRequest({ message: 'gambling', agentId: 'support', metadata: { action: 'chat' } }))).decision,
    'deny'
  )
})

t.test('unrestricted admits everything in both phases', async (t) => {
  const p = yaml({
    agent: 'support',
    unrestricted: true,
    justification: 'demo playground',
    tier: 'RULE_BASED',
    'post-response-check': true
  })
  t.same(p.evaluate(pre(aiRequest({ message: 'write python code', agentId: 'support' }))), { decision: 'admit' })
  t.same(p.evaluate(post(aiRequest({ message: 'x', agentId: 'support' }), 'python')), { decision: 'admit' })
})

// A third-party guardrail through the public ScopeGuardrail contract, to reach the ERROR and throw seams.
class Scripted implements ScopeGuardrail {
  constructor(private readonly fn: (r: AiRequest, s: ScopeConfig) => ScopeVerdict | Promise<ScopeVerdict>) {}
  tier() {
    return 'RULE_BASED' as const
  }
  evaluate(r: AiRequest, s: ScopeConfig) {
    return this.fn(r, s)
  }
}
const scoped = (
  fn: (r: AiRequest, s: ScopeConfig) => ScopeVerdict | Promise<ScopeVerdict>,
  extra: Record<string, unknown> = {}
) =>
  new ScopePolicy(
    's',
    'code:test',
    '1',
    scopeFromAgentAttributes({ purpose: 'Orders', tier: 'RULE_BASED', ...extra }),
    'support',
    new Scripted(fn),
    testRuntime()
  )
const req = aiRequest({ message: 'hello', agentId: 'support' })

t.test('an ERROR verdict denies with "scope check errored: " (fail closed)', async (t) => {
  t.same(
    scoped(() => ({ outcome: 'ERROR', reason: 'LLM scope classifier timeout: x', similarity: NaN })).evaluate(pre(req)),
    { decision: 'deny', reason: 'scope check errored: LLM scope classifier timeout: x' }
  )
  t.same(
    await scoped(async () => ({ outcome: 'ERROR', reason: 'failed to embed purpose', similarity: NaN })).evaluate(
      pre(req)
    ),
    { decision: 'deny', reason: 'scope check errored: failed to embed purpose' }
  )
  t.same(scoped(() => undefined as unknown as ScopeVerdict).evaluate(pre(req)), {
    decision: 'deny',
    reason: 'scope check errored: the guardrail returned no verdict'
  })
})

t.test('a throwing guardrail denies with "scope check failed: <msg>"', async (t) => {
  t.same(
    scoped(() => {
      throw new Error('boom')
    }).evaluate(pre(req)),
    { decision: 'deny', reason: 'scope check failed: boom' }
  )
  t.same(
    await scoped(async () => {
      throw new Error('async boom')
    }).evaluate(pre(req)),
    { decision: 'deny', reason: 'scope check failed: async boom' }
  )
})

t.test('an empty out-of-scope reason gets the default wording', async (t) => {
  t.same(
    scoped(() => ({ outcome: 'OUT_OF_SCOPE', reason: '', similarity: 0.1 }), { onBreach: 'DENY' }).evaluate(pre(req)),
    { decision: 'deny', reason: 'request falls outside endpoint scope' }
  )
})

t.test('post-response check (rule 5)', async (t) => {
  const off = () => ({ outcome: 'OUT_OF_SCOPE' as const, reason: 'drifted', similarity: 0.1 })
  t.same(scoped(off).evaluate(post(req, 'python code')), { decision: 'admit' }, 'disabled by default')
  const p = yaml({ ...base, 'post-response-check': true })
  t.same(
    p.evaluate(post(aiRequest({ message: 'orders?', agentId: 'support' }), 'Here is a python script')),
    { decision: 'deny', reason: "post-response: message matched built-in hijacking probe: 'python'" },
    'flagged response denies, even with POLITE_REDIRECT'
  )
  t.same(p.evaluate(post(aiRequest({ message: 'orders?', agentId: 'support' }), 'Your order shipped.')), {
    decision: 'admit'
  })
  t.same(
    p.evaluate(post(aiRequest({ message: 'orders?', agentId: 'support' }), '   ')),
    { decision: 'admit' },
    'blank response'
  )
  t.same(scoped(off, { postResponseCheck: true }).evaluate(post(req, 'x')), {
    decision: 'deny',
    reason: 'post-response: drifted'
  })
  t.same(
    scoped(() => ({ outcome: 'OUT_OF_SCOPE', reason: '', similarity: 0 }), { postResponseCheck: true }).evaluate(
      post(req, 'x')
    ),
    { decision: 'deny', reason: 'post-response: response drifted outside endpoint scope' }
  )
  t.same(
    scoped(() => ({ outcome: 'ERROR', reason: 'uncertain', similarity: NaN }), { postResponseCheck: true }).evaluate(
      post(req, 'x')
    ),
    { decision: 'admit' },
    'an uncertain verdict admits'
  )
  t.same(
    scoped(
      () => {
        throw new Error('boom')
      },
      { postResponseCheck: true }
    ).evaluate(post(req, 'x')),
    { decision: 'admit' },
    'a throw admits'
  )
  t.same(
    await scoped(
      async () => {
        throw new Error('boom')
      },
      { postResponseCheck: true }
    ).evaluate(post(req, 'x')),
    { decision: 'admit' },
    'an async throw admits'
  )
  let seen = ''
  await scoped(
    (r) => {
      seen = r.message
      return { outcome: 'IN_SCOPE', reason: '', similarity: 1 }
    },
    { postResponseCheck: true }
  ).evaluate(post(req, 'the response text'))
  t.equal(seen, 'the response text', 'the response is classified in place of the message')
})

t.test('a guardrail of another tier than the config is refused', async (t) => {
  t.throws(
    () =>
      new ScopePolicy(
        's',
        'code:x',
        '1',
        scopeFromAgentAttributes({ purpose: 'p' }),
        null,
        new Scripted(() => ({ outcome: 'IN_SCOPE', reason: '', similarity: 1 })),
        testRuntime()
      ),
    /guardrail tier RULE_BASED does not match config tier EMBEDDING_SIMILARITY/
  )
})
