import t from 'tap'
import { loadConfig } from '../../runtime/areas.js'
import { scopeFromPolicyConfig, scopeFromAgentAttributes } from '../../runtime/scope/scope-config.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { scopePolicyForAgent } from '../../runtime/scope/index.js'
import { DEFAULT_REDIRECT } from '../../runtime/scope/contract.js'
import { SEMANTIC_FAIL_OPEN_PROPERTY, LLM_FAIL_OPEN_PROPERTY } from '../../runtime/scope/system-properties.js'

t.test('YAML kebab-case keys with the @AgentScope defaults', async (t) => {
  const { agent, config } = scopeFromPolicyConfig({ agent: 'support', purpose: 'Customer support' })
  t.equal(agent, 'support')
  t.same(config, {
    purpose: 'Customer support',
    forbiddenTopics: [],
    onBreach: 'POLITE_REDIRECT',
    redirectMessage: DEFAULT_REDIRECT,
    tier: 'EMBEDDING_SIMILARITY',
    similarityThreshold: 0.45,
    unrestricted: false,
    justification: '',
    postResponseCheck: false
  })
  t.equal(
    DEFAULT_REDIRECT,
    "I can only help with topics within this assistant's declared scope. What can I help you with on that?"
  )
  const full = scopeFromPolicyConfig({
    agent: 'support',
    purpose: 'p',
    'forbidden-topics': ['legal advice', 'medical advice'],
    'on-breach': 'CUSTOM_MESSAGE',
    'redirect-message': 'Orders only, please.',
    tier: 'SEMANTIC_INTENT',
    'similarity-threshold': 0.6,
    'post-response-check': true
  }).config
  t.same(full.forbiddenTopics, ['legal advice', 'medical advice'])
  t.equal(full.onBreach, 'CUSTOM_MESSAGE')
  t.equal(full.redirectMessage, 'Orders only, please.')
  t.equal(full.tier, 'SEMANTIC_INTENT')
  t.equal(full.similarityThreshold, 0.6)
  t.equal(full.postResponseCheck, true)
  t.ok(Object.isFrozen(full), 'the config is immutable')
})

t.test('enum values are the spec names, case and dash insensitive', async (t) => {
  for (const tier of ['RULE_BASED', 'EMBEDDING_SIMILARITY', 'SEMANTIC_INTENT', 'LLM_CLASSIFIER'])
    t.equal(scopeFromPolicyConfig({ purpose: 'p', tier }).config.tier, tier)
  t.equal(scopeFromPolicyConfig({ purpose: 'p', tier: 'rule-based' }).config.tier, 'RULE_BASED')
  t.equal(scopeFromPolicyConfig({ purpose: 'p', 'on-breach': 'deny' }).config.onBreach, 'DENY')
})

t.test('no agent: the scope applies to every request', async (t) => {
  t.equal(scopeFromPolicyConfig({ purpose: 'p' }).agent, null)
})

t.test('load-time config errors name the key', async (t) => {
  const bad: [unknown, string][] = [
    [
      { purpose: 'p', tier: 'FAST' },
      'scope: \'tier\' must be one of RULE_BASED, EMBEDDING_SIMILARITY, SEMANTIC_INTENT, LLM_CLASSIFIER (got "FAST")'
    ],
    [
      { purpose: 'p', tier: 3 },
      "scope: 'tier' must be one of RULE_BASED, EMBEDDING_SIMILARITY, SEMANTIC_INTENT, LLM_CLASSIFIER (got 3)"
    ],
    [
      { purpose: 'p', 'on-breach': 'IGNORE' },
      'scope: \'on-breach\' must be one of POLITE_REDIRECT, DENY, CUSTOM_MESSAGE (got "IGNORE")'
    ],
    [{}, "scope: 'purpose' is required unless 'unrestricted' is true"],
    [{ purpose: '   ' }, "scope: 'purpose' is required unless 'unrestricted' is true"],
    [{ unrestricted: true }, "scope: 'justification' must not be blank when 'unrestricted' is true"],
    [
      { unrestricted: true, justification: ' ' },
      "scope: 'justification' must not be blank when 'unrestricted' is true"
    ],
    [
      { purpose: 'p', 'similarity-threshold': 1.5 },
      "scope: 'similarity-threshold' must be a number from 0 to 1 (got 1.5)"
    ],
    [
      { purpose: 'p', 'similarity-threshold': '0.5' },
      'scope: \'similarity-threshold\' must be a number from 0 to 1 (got "0.5")'
    ],
    [{ purpose: 'p', 'forbidden-topics': 'gambling' }, "scope: 'forbidden-topics' must be a list of non-blank strings"],
    [{ purpose: 'p', 'forbidden-topics': ['ok', ''] }, "scope: 'forbidden-topics' must be a list of non-blank strings"],
    [
      { purpose: 'p', 'on-breach': 'CUSTOM_MESSAGE' },
      "scope: 'redirect-message' must not be blank when 'on-breach' is CUSTOM_MESSAGE"
    ],
    [{ purpose: 'p', unrestricted: 'yes' }, "scope: 'unrestricted' must be true or false"],
    [{ purpose: 'p', 'post-response-check': 1 }, "scope: 'post-response-check' must be true or false"],
    [
      { purpose: 'p', forbiddenTopics: ['x'] },
      "scope: unknown key 'forbiddenTopics' (known: agent, purpose, forbidden-topics, on-breach, redirect-message, tier, similarity-threshold, unrestricted, justification, post-response-check)"
    ],
    [{ purpose: 'p', agent: '' }, "scope: 'agent' must be a non-blank agent id"],
    [{ purpose: 7 }, "scope: 'purpose' must be a string"],
    [['purpose'], 'scope: config must be a map']
  ]
  for (const [cfg, msg] of bad)
    t.throws(() => scopeFromPolicyConfig(cfg), { code: 'PLT_ERR_SCOPE_CONFIG_INVALID', message: msg }, msg)
  t.throws(
    () => createScopePolicy({ name: 'bad', source: 'yaml:x', version: '1', config: { purpose: 'p', tier: 'FAST' } }),
    { code: 'PLT_ERR_SCOPE_CONFIG_INVALID' },
    'the factory throws at load'
  )
})

t.test('SDK agent({scope}) attributes: camelCase, same defaults and checks', async (t) => {
  const c = scopeFromAgentAttributes(
    { purpose: 'Orders', forbiddenTopics: ['refund fraud'], onBreach: 'DENY', similarityThreshold: 0.5 },
    'support'
  )
  t.equal(c.tier, 'EMBEDDING_SIMILARITY')
  t.equal(c.onBreach, 'DENY')
  t.equal(c.redirectMessage, DEFAULT_REDIRECT)
  t.same(c.forbiddenTopics, ['refund fraud'])
  t.throws(() => scopeFromAgentAttributes({ unrestricted: true }, 'playground'), {
    code: 'PLT_ERR_SCOPE_CONFIG_INVALID',
    message: "agent 'playground' scope: 'justification' must not be blank when 'unrestricted' is true"
  })
  t.throws(
    () => scopeFromAgentAttributes({ purpose: 'p', 'forbidden-topics': [] }, 'a'),
    /unknown key 'forbidden-topics'/
  )
  t.throws(() => scopeFromAgentAttributes('orders', 'a'), /must be an object/)
})

t.test('scopePolicyForAgent names the policy after the agent', async (t) => {
  const p = scopePolicyForAgent({
    name: 'support',
    version: '2.1.0',
    scope: { purpose: 'Orders', tier: 'RULE_BASED' }
  })!
  t.equal(p.name, 'scope::support')
  t.equal(p.source, 'annotation:support')
  t.equal(p.version, '2.1.0')
  t.equal(p.className, 'ScopePolicy')
  t.equal(p.agent, 'support')
  t.equal(scopePolicyForAgent({ name: 'bare' }), null, 'no scope, no policy')
})

t.test('the fail-open switches are process properties that no configuration key binds (rule 4)', async (t) => {
  t.equal(SEMANTIC_FAIL_OPEN_PROPERTY, 'org.platform.ai.scope.semantic-intent.fail-open')
  t.equal(LLM_FAIL_OPEN_PROPERTY, 'org.platform.ai.scope.llm-classifier.fail-open')
  for (const key of [
    SEMANTIC_FAIL_OPEN_PROPERTY,
    LLM_FAIL_OPEN_PROPERTY,
    'platform.ai.scope.semantic-intent.fail-open',
    'platform.ai.scope.llm-classifier.fail-open'
  ]) {
    t.throws(
      () => loadConfig({ env: {}, overrides: { [key]: true } }),
      { code: 'PLT_ERR_CONFIG_INVALID' },
      `${key} is not a configuration key`
    )
  }
  const env = {
    PLATFORM_AI_SCOPE_LLM_CLASSIFIER_FAIL_OPEN: 'true',
    PLATFORM_AI_SCOPE_SEMANTIC_INTENT_FAIL_OPEN: 'true'
  }
  let cfg
  try {
    cfg = loadConfig({ env })
  } catch (err) {
    cfg = err
  }
  if (cfg instanceof Error) t.match(cfg.message, /FAIL_OPEN|fail-open/i, 'the environment variables are rejected')
  else
    t.equal(
      (cfg as { get: (k: string) => unknown }).get('platform.ai.scope.llm-classifier.fail-open'),
      undefined,
      'the environment variables bind nothing'
    )
})

t.test('the process property map is one per process, even across module instances', async (t) => {
  const a = await import('../../runtime/scope/system-properties.js')
  const b = (await import('../../runtime/scope/system-properties.js?second-instance' as string)) as typeof a
  t.not(a, b, 'two module instances')
  a.setSystemProperty(LLM_FAIL_OPEN_PROPERTY, 'true')
  t.equal(b.getSystemProperty(LLM_FAIL_OPEN_PROPERTY), 'true')
  t.ok(b.booleanSystemProperty(LLM_FAIL_OPEN_PROPERTY))
  t.ok(b.clearSystemProperty(LLM_FAIL_OPEN_PROPERTY))
  t.notOk(a.booleanSystemProperty(LLM_FAIL_OPEN_PROPERTY))
  t.throws(() => a.setSystemProperty('', 'x'), TypeError)
})
