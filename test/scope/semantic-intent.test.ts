import t from 'tap'
import { aiRequest, type PolicyContext } from '../../runtime/contracts/index.js'
import { SemanticIntentScopeGuardrail, DEFAULT_MARGIN } from '../../runtime/scope/semantic-intent.js'
import { OpenAiEmbedder } from '../../runtime/scope/openai-embedder.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { scopeFromAgentAttributes } from '../../runtime/scope/scope-config.js'
import {
  setSystemProperty,
  clearSystemProperty,
  SEMANTIC_FAIL_OPEN_PROPERTY
} from '../../runtime/scope/system-properties.js'
import { type ScopeConfig } from '../../runtime/scope/contract.js'
import { OpenAiServer, tableEmbeddings } from '../helpers/openai-server.js'
import { testRuntime, warned } from '../helpers/scope-runtime.js'

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
t.afterEach(() => {
  clearSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY)
})

const PURPOSE = 'Customer support for orders'
const unit = (a: number, b: number) => [a, b, Math.sqrt(Math.max(0, 1 - a * a - b * b))]
const TABLE: Record<string, number[]> = {
  [PURPOSE]: [1, 0, 0],
  'medical advice': [0, 1, 0],
  'clear order question': unit(0.8, 0.5), // margin 0.3
  'allergens in the sundae': unit(0.55, 0.58), // above threshold, topic better: margin -0.03
  'close call': unit(0.6, 0.57), // margin 0.03 < 0.05
  'just enough': unit(0.625, 0.5), // margin 0.125
  'off topic': unit(0.2, 0.1) // below threshold
}
const scope: ScopeConfig = scopeFromAgentAttributes({
  purpose: PURPOSE,
  forbiddenTopics: ['medical advice'],
  tier: 'SEMANTIC_INTENT'
})
const embedder = (timeoutMs = 2000) => new OpenAiEmbedder({ baseUrl: server.url, model: 'm', timeoutMs })
t.beforeEach(() => {
  server.reset()
  server.embeddings = tableEmbeddings(TABLE)
})

t.test('margin is 0.05', async (t) => {
  t.equal(DEFAULT_MARGIN, 0.05)
  t.equal(new SemanticIntentScopeGuardrail(testRuntime()).tier(), 'SEMANTIC_INTENT')
  t.throws(() => new SemanticIntentScopeGuardrail(testRuntime(), 1), /margin must be in \[0, 1\), got: 1/)
})

t.test('admitted only above the threshold and ahead of every forbidden topic by the margin', async (t) => {
  const g = new SemanticIntentScopeGuardrail(testRuntime({ embedder: embedder() }))
  t.equal((await g.evaluate(aiRequest({ message: 'clear order question' }), scope)).outcome, 'IN_SCOPE')
  t.equal((await g.evaluate(aiRequest({ message: 'just enough' }), scope)).outcome, 'IN_SCOPE')
  t.same(await g.evaluate(aiRequest({ message: 'close call' }), scope), {
    outcome: 'OUT_OF_SCOPE',
    reason:
      "semantic-intent margin violated: purpose sim 0.6 only beats forbidden topic 'medical advice' (sim=0.57) by 0.03, below margin 0.05",
    similarity: 0.6
  })
  t.equal(
    (await g.evaluate(aiRequest({ message: 'allergens in the sundae' }), scope)).reason,
    "semantic-intent margin violated: purpose sim 0.55 only beats forbidden topic 'medical advice' (sim=0.58) by -0.03, below margin 0.05"
  )
  const none = scopeFromAgentAttributes({ purpose: PURPOSE, tier: 'SEMANTIC_INTENT' })
  t.equal(
    (await g.evaluate(aiRequest({ message: 'close call' }), none)).outcome,
    'IN_SCOPE',
    'no forbidden topics: the threshold alone decides'
  )
})

t.test('a message below the threshold is rejected before forbidden topics are embedded (rule 2)', async (t) => {
  const g = new SemanticIntentScopeGuardrail(testRuntime({ embedder: embedder() }))
  t.match(await g.evaluate(aiRequest({ message: 'off topic' }), scope), {
    outcome: 'OUT_OF_SCOPE',
    reason: 'message similarity 0.2 below threshold 0.45'
  })
  const embedded = server.on('/embeddings').flatMap((b) => b.input)
  t.same(embedded, [PURPOSE, 'off topic'])
  t.notOk(embedded.includes('medical advice'))
})

t.test('an embedding call that fails gives ERROR, which the policy denies (rule 2)', async (t) => {
  const failOn = (text: string) => (input: string[]) =>
    input.includes(text) ? { status: 500, json: { error: 'down' } } : tableEmbeddings(TABLE)(input)
  const cases: [string, (input: string[]) => any, string][] = [
    ['purpose', failOn(PURPOSE), 'failed to embed purpose'],
    ['request message', failOn('clear order question'), 'failed to embed request message'],
    ['forbidden topic', failOn('medical advice'), "failed to embed forbidden topic 'medical advice'"],
    ['garbage reply', () => ({ raw: '}{' }), 'failed to embed purpose'],
    ['timeout', () => ({ hang: true }), 'failed to embed purpose']
  ]
  for (const [what, behaviour, reason] of cases) {
    server.embeddings = behaviour
    const rt = testRuntime({ embedder: embedder(150) })
    const g = new SemanticIntentScopeGuardrail(rt)
    t.same(
      await g.evaluate(aiRequest({ message: 'clear order question' }), scope),
      { outcome: 'ERROR', reason, similarity: NaN },
      what
    )
    const p = createScopePolicy(
      {
        name: 'sem',
        source: 'yaml:x',
        version: '1',
        config: { purpose: PURPOSE, 'forbidden-topics': ['medical advice'], tier: 'SEMANTIC_INTENT' }
      },
      rt
    )
    const ctx: PolicyContext = {
      phase: 'PRE_ADMISSION',
      request: aiRequest({ message: 'clear order question' }),
      accumulatedResponse: ''
    }
    t.same(
      await p.evaluate(ctx),
      { decision: 'deny', reason: `scope check errored: ${reason}` },
      `${what}: denied at pre-admission`
    )
    const post = createScopePolicy(
      {
        name: 'sem',
        source: 'yaml:x',
        version: '1',
        config: {
          purpose: PURPOSE,
          'forbidden-topics': ['medical advice'],
          tier: 'SEMANTIC_INTENT',
          'post-response-check': true
        }
      },
      rt
    )
    t.same(
      await post.evaluate({ ...ctx, phase: 'POST_RESPONSE', accumulatedResponse: 'clear order question' }),
      { decision: 'admit' },
      `${what}: admitted post-response (rule 5)`
    )
  }
})

t.test('no embedding runtime: degrade to rule-based with a warning (rule 1)', async (t) => {
  const rt = testRuntime()
  const g = new SemanticIntentScopeGuardrail(rt)
  t.same(g.evaluate(aiRequest({ message: 'what dosage should I take' }), scope), {
    outcome: 'OUT_OF_SCOPE',
    reason: "message matched built-in hijacking probe: 'dosage'",
    similarity: NaN
  })
  t.equal(
    (g.evaluate(aiRequest({ message: 'anything at all' }), scope) as { outcome: string }).outcome,
    'IN_SCOPE',
    'not admitted unscreened: the rules decided'
  )
  t.ok(warned(rt.logs, 'degrades to RULE_BASED'))
})

t.test('fail-open process property, read on each request that finds no runtime (rule 4)', async (t) => {
  const rt = testRuntime()
  const g = new SemanticIntentScopeGuardrail(rt)
  const probe = aiRequest({ message: 'what dosage should I take' })
  t.equal((g.evaluate(probe, scope) as { outcome: string }).outcome, 'OUT_OF_SCOPE')
  setSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY, 'TRUE')
  t.same(
    g.evaluate(probe, scope),
    {
      outcome: 'IN_SCOPE',
      reason: 'fail-open: no embedding runtime for the semantic-intent scope tier',
      similarity: NaN
    },
    'takes effect on the next request'
  )
  t.ok(warned(rt.logs, 'admits the request unscreened (fail-open mode)'))
  setSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY, 'yes')
  t.equal((g.evaluate(probe, scope) as { outcome: string }).outcome, 'OUT_OF_SCOPE', 'only "true" turns it on')
  clearSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY)
  t.equal((g.evaluate(probe, scope) as { outcome: string }).outcome, 'OUT_OF_SCOPE', 'cleared: back to degrading')
})

t.test('fail-open does not cover a runtime that fails: that stays ERROR', async (t) => {
  setSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY, 'true')
  server.embeddings = () => ({ status: 500, json: {} })
  const g = new SemanticIntentScopeGuardrail(testRuntime({ embedder: embedder() }))
  t.equal((await g.evaluate(aiRequest({ message: 'clear order question' }), scope)).outcome, 'ERROR')
})

t.test('the failOpen constructor argument overrides the property', async (t) => {
  const rt = testRuntime()
  const open = new SemanticIntentScopeGuardrail(rt, DEFAULT_MARGIN, true)
  t.ok(warned(rt.logs, 'is fail-open'), 'warned at construction')
  t.equal((open.evaluate(aiRequest({ message: 'what dosage' }), scope) as { outcome: string }).outcome, 'IN_SCOPE')
  setSystemProperty(SEMANTIC_FAIL_OPEN_PROPERTY, 'true')
  const closed = new SemanticIntentScopeGuardrail(testRuntime(), DEFAULT_MARGIN, false)
  t.equal(
    (closed.evaluate(aiRequest({ message: 'what dosage' }), scope) as { outcome: string }).outcome,
    'OUT_OF_SCOPE',
    'false ignores the property'
  )
})
