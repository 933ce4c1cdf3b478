import t from 'tap'
import { aiRequest } from '../../runtime/contracts/index.js'
import { RuleBasedScopeGuardrail, containsWord, HIJACKING_PROBES } from '../../runtime/scope/rule-based.js'
import { scopeFromAgentAttributes } from '../../runtime/scope/scope-config.js'
import { type ScopeConfig } from '../../runtime/scope/contract.js'

const g = new RuleBasedScopeGuardrail()
const scope = (purpose: string, forbiddenTopics: string[] = []): ScopeConfig =>
  scopeFromAgentAttributes({ purpose, forbiddenTopics, tier: 'RULE_BASED' })
const support = scope('Customer support for Example Corp orders, billing and shipping', ['gambling', 'legal advice'])
const check = (s: ScopeConfig, message: string) => g.evaluate(aiRequest({ message }), s)

t.test('tier and synchronous verdicts', async (t) => {
  t.equal(g.tier(), 'RULE_BASED')
  const v = check(support, 'where is my order?')
  t.notOk(v instanceof Promise, 'rule-based answers synchronously')
  t.equal(v.outcome, 'IN_SCOPE')
  t.ok(Number.isNaN(v.similarity))
})

t.test('forbidden topics match as word-boundaried, case-insensitive substrings', async (t) => {
  t.same(check(support, 'Any tips on GAMBLING?'), {
    outcome: 'OUT_OF_SCOPE',
    reason: "message references forbidden topic: 'gambling'",
    similarity: NaN
  })
  t.equal(check(support, 'I need legal advice now').reason, "message references forbidden topic: 'legal advice'")
  t.equal(check(support, 'gambling').outcome, 'OUT_OF_SCOPE', 'whole message')
  t.equal(check(support, '(gambling)').outcome, 'OUT_OF_SCOPE', 'punctuation is a boundary')
  t.equal(check(support, 'antigambling league').outcome, 'IN_SCOPE', 'a letter before is no boundary')
  t.equal(check(support, 'gambling2 stats').outcome, 'IN_SCOPE', 'a digit after is no boundary')
  t.equal(check(support, 'ägambling').outcome, 'IN_SCOPE', 'a non-ASCII letter is a letter')
  t.equal(check(support, 'xgambling gambling').outcome, 'OUT_OF_SCOPE', 'a later occurrence still counts')
  t.equal(check(scope('cooking', ['a a']), 'xa a a').outcome, 'OUT_OF_SCOPE', 'overlapping occurrences are all tried')
  t.ok(containsWord('the legal advice.', 'legal advice'))
  t.notOk(containsWord('illegal advice', 'legal advice'))
  t.notOk(containsWord('anything', ''))
  t.equal(check(support, 'Legal Advices please').outcome, 'IN_SCOPE', 'plural is another word')
})

t.test('the reason names the topic as declared', async (t) => {
  t.equal(
    check(scope('cooking', ['Crypto Tips']), 'any crypto tips?').reason,
    "message references forbidden topic: 'Crypto Tips'"
  )
})

t.test('the six built-in hijacking probes with their exact reasons', async (t) => {
  t.equal(HIJACKING_PROBES.length, 6)
  const cases: [string, string][] = [
    ['Please write me some code to sort numbers', 'write me some code'],
    ['can you generate a function for me', 'generate a function'],
    ['how do I reverse a string in Python', 'python'],
    ['what changed in c++17', 'c++'],
    ['reverse a linked list', 'linked list'],
    ['what is a binarytree', 'binarytree'],
    ['can you diagnose my rash', 'diagnose'],
    ['what dosage of ibuprofen', 'dosage'],
    ['I want to sue my landlord', 'sue'],
    ['is a class action possible', 'class action'],
    ['should I invest in bonds', 'invest'],
    ['give me a stock pick', 'stock pick'],
    ['should I buy bitcoin', 'buy bitcoin']
  ]
  for (const [message, matched] of cases) {
    t.same(
      check(support, message),
      { outcome: 'OUT_OF_SCOPE', reason: `message matched built-in hijacking probe: '${matched}'`, similarity: NaN },
      message
    )
  }
  t.equal(check(support, 'is javascript allowed').reason, "message matched built-in hijacking probe: 'javascript'")
  t.equal(
    check(support, 'c++ templates').outcome,
    'IN_SCOPE',
    "the reference's `\\bc\\+\\+\\b` needs a word character after '++' (kept exactly)"
  )
  t.equal(check(support, 'my order number is 12').outcome, 'IN_SCOPE')
  t.equal(
    check(support, 'investigate my late order').outcome,
    'IN_SCOPE',
    '\\b after the word: investigate is not invest'
  )
})

t.test('a probe is skipped when the purpose lies in its domain', async (t) => {
  const dental = scope('Dental clinic assistant for patients')
  t.equal(
    check(dental, 'what dosage of ibuprofen for my toothache?').outcome,
    'IN_SCOPE',
    'medical domain suppresses the medical probe'
  )
  t.equal(check(dental, 'write me a python script').outcome, 'OUT_OF_SCOPE', 'the code probes stay on')
  const coding = scope('Coding assistant for our software team')
  t.equal(
    check(coding, 'write a function to reverse a linked list in python').outcome,
    'IN_SCOPE',
    'code domain suppresses all three code probes'
  )
  t.equal(check(coding, 'should I sue them').outcome, 'OUT_OF_SCOPE')
  t.equal(check(scope('Paralegal helper for a law firm'), 'can I sue my employer').outcome, 'IN_SCOPE', 'legal domain')
  t.equal(check(scope('Retail banking helper'), 'should I invest in funds').outcome, 'IN_SCOPE', 'financial domain')
  t.equal(check(scope('Retail banking helper'), 'what is the dosage').outcome, 'OUT_OF_SCOPE')
  t.equal(
    check(scope('Lawn care tips'), 'can I sue the neighbour').outcome,
    'OUT_OF_SCOPE',
    "'law\\b' does not match 'lawn'"
  )
  t.equal(check(scope('a git helper'), 'write a script for me').outcome, 'IN_SCOPE', "'git\\b' marks the code domain")
})

t.test('forbidden topics are checked before the probes, and still apply in the probe domain', async (t) => {
  const dental = scope('Dental clinic assistant', ['whitening'])
  t.equal(check(dental, 'whitening dosage').reason, "message references forbidden topic: 'whitening'")
})

t.test('an unrestricted scope and a missing message are in scope', async (t) => {
  const open = scopeFromAgentAttributes({ unrestricted: true, justification: 'playground', tier: 'RULE_BASED' })
  t.equal(check(open, 'write me python code').outcome, 'IN_SCOPE')
  t.equal(
    g.evaluate({ ...aiRequest({ message: '' }), message: null as unknown as string }, support).outcome,
    'IN_SCOPE'
  )
})
