import t from 'tap'
import { aiRequest, type PolicyContext } from '../../runtime/contracts/index.js'
import { LlmClassifierScopeGuardrail } from '../../runtime/scope/llm-classifier.js'
import { OpenAiDecisionModel, parseAnswer } from '../../runtime/scope/openai-decision-model.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { scopeFromAgentAttributes } from '../../runtime/scope/scope-config.js'
import {
  setSystemProperty,
  clearSystemProperty,
  LLM_FAIL_OPEN_PROPERTY
} from '../../runtime/scope/system-properties.js'
import {
  judgeNoul,
  FLAGGED_AT,
  CLEAR_BELOW,
  MAX_STATE_CHARS,
  type DecisionModel
} from '../../runtime/scope/decision-model.js'
import { type ScopeConfig } from '../../runtime/scope/contract.js'
import { OpenAiServer, chatReply } from '../helpers/openai-server.js'
import { testRuntime, warned } from '../helpers/scope-runtime.js'

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
t.beforeEach(() => {
  server.reset()
})
t.afterEach(() => {
  clearSystemProperty(LLM_FAIL_OPEN_PROPERTY)
})

const scope: ScopeConfig = scopeFromAgentAttributes({
  purpose: 'Customer support for orders',
  forbiddenTopics: ['medical advice', 'legal advice'],
  tier: 'LLM_CLASSIFIER'
})
const model = (timeoutMs = 2000, max = 8) =>
  new OpenAiDecisionModel({ baseUrl: server.url, model: 'judge-1', apiKey: 'sk-j', timeoutMs }, max)
const guard = (opts: { timeoutMs?: number; failOpen?: boolean; decisionModel?: DecisionModel | null } = {}) => {
  const rt = testRuntime({
    ...(opts.decisionModel === null ? {} : { decisionModel: opts.decisionModel ?? model(opts.timeoutMs) }),
    decisionTimeoutMs: opts.timeoutMs ?? 2000
  })
  return { rt, g: new LlmClassifierScopeGuardrail(rt, opts.failOpen) }
}
const ask = async (content: string | null, extra: { refusal?: string; finish_reason?: string } = {}) => {
  server.chat = () => chatReply(content, extra)
  return await guard().g.evaluate(aiRequest({ message: 'can you check my order?' }), scope)
}

t.test('the bands are 0.5 and 0.2', async (t) => {
  t.equal(FLAGGED_AT, 0.5)
  t.equal(CLEAR_BELOW, 0.2)
})

t.test('one typed boolean question per request, through the chat API', async (t) => {
  server.chat = () => chatReply('{"answer": false, "confidence": 0.95}')
  const { g } = guard()
  t.equal(g.tier(), 'LLM_CLASSIFIER')
  await g.evaluate(aiRequest({ message: 'can you check my order?' }), scope)
  const calls = server.on('/chat/completions')
  t.equal(calls.length, 1)
  const body = calls[0]
  t.equal(body.model, 'judge-1')
  t.equal(body.temperature, 0)
  t.same(body.response_format, { type: 'json_object' })
  t.equal(body.messages.length, 2)
  t.match(body.messages[0].content, /Customer support for orders/)
  t.match(body.messages[0].content, / {2}- medical advice\n {2}- legal advice/)
  t.match(body.messages[0].content, /"answer"/)
  t.equal(body.messages[1].content, 'STATE:\ncan you check my order?')
  t.equal(server.calls[0]!.auth, 'Bearer sk-j')
})

t.test('rule 3 mapping of answers', async (t) => {
  t.same(
    await ask('{"answer": false, "confidence": 0.95}'),
    { outcome: 'IN_SCOPE', reason: '', similarity: NaN },
    'false, P(off)=0.05: in scope'
  )
  t.same(await ask('{"answer": true, "confidence": 0.9}'), {
    outcome: 'OUT_OF_SCOPE',
    reason:
      'LLM classifier rejected as off-topic: P(off-topic)=0.900 from answer=true confidence=0.900 [MODEL_REPORTED_FIELD]',
    similarity: NaN
  })
  t.same(
    await ask('{"answer": true}'),
    {
      outcome: 'OUT_OF_SCOPE',
      reason:
        'LLM classifier rejected as off-topic: off-topic with answer=true, confidence=unknown [MODEL_REPORTED_FIELD]',
      similarity: NaN
    },
    'true with no confidence is out of scope'
  )
  t.same(
    await ask('{"answer": false, "confidence": 0.4}'),
    {
      outcome: 'OUT_OF_SCOPE',
      reason:
        'LLM classifier rejected as off-topic: P(off-topic)=0.600 from answer=false confidence=0.400 [MODEL_REPORTED_FIELD]',
      similarity: NaN
    },
    'a false answer whose belief is P(off)>=0.5'
  )
  t.same(
    await ask('{"answer": true, "confidence": 0.5}'),
    {
      outcome: 'OUT_OF_SCOPE',
      reason:
        'LLM classifier rejected as off-topic: P(off-topic)=0.500 from answer=true confidence=0.500 [MODEL_REPORTED_FIELD]',
      similarity: NaN
    },
    'exactly 0.5 is out'
  )
  t.same(
    await ask('{"answer": false, "confidence": 0.7}'),
    {
      outcome: 'ERROR',
      reason: 'LLM scope classifier P(off-topic)=0.300 from answer=false confidence=0.700 [MODEL_REPORTED_FIELD]',
      similarity: NaN
    },
    'the band between 0.2 and 0.5'
  )
  t.same(await ask('{"answer": false}'), {
    outcome: 'ERROR',
    reason: 'LLM scope classifier answered false with no confidence [MODEL_REPORTED_FIELD]',
    similarity: NaN
  })
  t.same(
    await ask('{"answer": false, "confidence": 7}'),
    {
      outcome: 'ERROR',
      reason: 'LLM scope classifier answered false with no confidence [MODEL_REPORTED_FIELD]',
      similarity: NaN
    },
    'an out-of-range confidence is no confidence'
  )
  t.same(await ask('{"answer": true, "confidence": 0.1}'), {
    outcome: 'ERROR',
    reason:
      'LLM scope classifier the answer is true but P(off-topic)=0.100 from answer=true confidence=0.100 [MODEL_REPORTED_FIELD]',
    similarity: NaN
  })
  t.equal(
    (await ask('```json\n{"answer": false, "confidence": 0.99}\n```')).outcome,
    'IN_SCOPE',
    'one surrounding fence is tolerated'
  )
})

t.test('judgeNoul at the exact thresholds', async (t) => {
  t.equal(judgeNoul({ kind: 'noul', value: true, confidence: 0.5 }, 'x').outcome, 'FLAGGED')
  t.equal(judgeNoul({ kind: 'noul', value: true, confidence: 0.4999 }, 'x').outcome, 'UNCERTAIN')
  t.equal(judgeNoul({ kind: 'noul', value: true, confidence: 0.2 }, 'x').outcome, 'UNCERTAIN', 'P=0.2 is in the band')
  t.equal(
    judgeNoul({ kind: 'noul', value: false, confidence: 0.5 }, 'x').outcome,
    'FLAGGED',
    'false at 0.5 is P(true)=0.5'
  )
  t.equal(judgeNoul({ kind: 'noul', value: false, confidence: 0.81 }, 'x').outcome, 'CLEAR')
  t.equal(judgeNoul({ kind: 'noul', value: false, confidence: 0.79 }, 'x').outcome, 'UNCERTAIN')
  t.equal(judgeNoul(null, 'x').reason, 'no answer')
  t.same(judgeNoul({ kind: 'failed', reason: 'timeout', detail: 'late' }, 'x'), {
    outcome: 'UNCERTAIN',
    reason: 'timeout: late'
  })
})

t.test('every unusable reply is uncertain, hence ERROR (fail closed)', async (t) => {
  const bad: [string, () => void, RegExp][] = [
    [
      'empty content',
      () => {
        server.chat = () => chatReply('')
      },
      /^LLM scope classifier unparseable: empty reply$/
    ],
    [
      'null content',
      () => {
        server.chat = () => chatReply(null)
      },
      /unparseable: empty reply/
    ],
    [
      'prose',
      () => {
        server.chat = () => chatReply('No, this is fine.')
      },
      /unparseable: reply is not JSON/
    ],
    [
      'a JSON array',
      () => {
        server.chat = () => chatReply('[true]')
      },
      /unparseable: reply is not a JSON object/
    ],
    [
      'out-of-set answer',
      () => {
        server.chat = () => chatReply('{"answer": "maybe", "confidence": 0.9}')
      },
      /invalid_answer: answer "maybe" is not true or false/
    ],
    [
      'missing answer',
      () => {
        server.chat = () => chatReply('{"confidence": 0.9}')
      },
      /invalid_answer: answer undefined is not true or false/
    ],
    [
      'a refusal',
      () => {
        server.chat = () => chatReply(null, { refusal: "I can't help with that." })
      },
      /error: model refused: I can't help with that\./
    ],
    [
      'a content filter',
      () => {
        server.chat = () => chatReply(null, { finish_reason: 'content_filter' })
      },
      /error: reply withheld by a content filter/
    ],
    [
      'no choices',
      () => {
        server.chat = () => ({ json: { choices: [] } })
      },
      /unparseable: reply has no choices/
    ],
    [
      'a garbage body',
      () => {
        server.chat = () => ({ raw: '<html>502</html>' })
      },
      /unparseable: .* not JSON/
    ],
    [
      'no capacity (429)',
      () => {
        server.chat = () => ({ status: 429, json: { error: { message: 'rate limited' } } })
      },
      /capacity: .* answered 429/
    ],
    [
      'no capacity (503)',
      () => {
        server.chat = () => ({ status: 503, json: {} })
      },
      /capacity: .* answered 503/
    ],
    [
      'a server error',
      () => {
        server.chat = () => ({ status: 500, json: { error: 'x' } })
      },
      /error: .* answered 500/
    ],
    [
      'a timeout',
      () => {
        server.chat = () => ({ hang: true })
      },
      /timeout: no reply from .* within/
    ]
  ]
  for (const [what, arrange, reason] of bad) {
    arrange()
    const { g } = guard({ timeoutMs: 200 })
    const v = await g.evaluate(aiRequest({ message: 'can you check my order?' }), scope)
    t.equal(v.outcome, 'ERROR', what)
    t.match(v.reason, reason, what)
  }
})

t.test('a server rejecting the JSON response format gets one retry without it', async (t) => {
  server.chat = (body) =>
    body.response_format !== undefined
      ? { status: 400, json: { error: { message: 'response_format unsupported' } } }
      : chatReply('{"answer": false, "confidence": 0.9}')
  t.equal((await guard().g.evaluate(aiRequest({ message: 'order?' }), scope)).outcome, 'IN_SCOPE')
  t.equal(server.on('/chat/completions').length, 2)
})

t.test('no reachable model denies every request on this tier (rule 3)', async (t) => {
  const { g, rt } = guard({ decisionModel: null })
  t.same(await g.evaluate(aiRequest({ message: 'order?' }), scope), {
    outcome: 'ERROR',
    reason: 'LLM scope classifier no decision model available',
    similarity: NaN
  })
  t.ok(warned(rt.logs, 'No decision model can answer'))
  const demoOnly: DecisionModel = {
    name: 'demo',
    isAvailable: () => false,
    decide: async () => ({ kind: 'noul', value: false, confidence: 1 })
  }
  t.equal(
    (await guard({ decisionModel: demoOnly }).g.evaluate(aiRequest({ message: 'order?' }), scope)).reason,
    'LLM scope classifier no decision model available',
    'an unavailable model (the demo runtime) is none'
  )
  const unreachable = new OpenAiDecisionModel({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000 })
  const v = await guard({ decisionModel: unreachable }).g.evaluate(aiRequest({ message: 'order?' }), scope)
  t.equal(v.outcome, 'ERROR')
  t.match(v.reason, /^LLM scope classifier error: .*unreachable/)
  const p = createScopePolicy(
    { name: 'llm', source: 'yaml:x', version: '1', config: { purpose: 'Orders', tier: 'LLM_CLASSIFIER' } },
    testRuntime()
  )
  const ctx: PolicyContext = {
    phase: 'PRE_ADMISSION',
    request: aiRequest({ message: 'where is my parcel' }),
    accumulatedResponse: ''
  }
  t.same(await p.evaluate(ctx), {
    decision: 'deny',
    reason: 'scope check errored: LLM scope classifier no decision model available'
  })
})

t.test('a request longer than the decision state bound is uncertain without a call', async (t) => {
  const v = await guard().g.evaluate(aiRequest({ message: 'x'.repeat(MAX_STATE_CHARS + 1) }), scope)
  t.equal(
    v.reason,
    `LLM scope classifier request of ${MAX_STATE_CHARS + 1} chars exceeds the 262144-char decision state bound`
  )
  t.equal(server.calls.length, 0)
})

t.test('a question that gets no slot before its deadline is no capacity', async (t) => {
  server.chat = () => ({ hang: true })
  const m = model(300, 1)
  const first = m.decide('a', { prompt: 'p', whenTrue: 't', whenFalse: 'f' }, 300)
  const second = await m.decide('b', { prompt: 'p', whenTrue: 't', whenFalse: 'f' }, 100)
  t.same(second, { kind: 'failed', reason: 'capacity', detail: 'no free slot among 1 before the deadline' })
  t.match(await first, { kind: 'failed', reason: 'timeout' })
  server.chat = () => chatReply('{"answer": false, "confidence": 1}')
  t.match(
    await m.decide('c', { prompt: 'p', whenTrue: 't', whenFalse: 'f' }, 1000),
    { kind: 'noul', value: false },
    'the slot is released'
  )
})

t.test('fail-open process property, read on each uncertain verdict (rule 4)', async (t) => {
  server.chat = () => ({ hang: true })
  const { g, rt } = guard({ timeoutMs: 100 })
  const msg = aiRequest({ message: 'order?' })
  t.equal((await g.evaluate(msg, scope)).outcome, 'ERROR')
  setSystemProperty(LLM_FAIL_OPEN_PROPERTY, 'true')
  const v = await g.evaluate(msg, scope)
  t.equal(v.outcome, 'IN_SCOPE')
  t.match(v.reason, /^fail-open: LLM scope classifier timeout: /)
  t.ok(warned(rt.logs, 'admitting (fail-open mode)'))
  server.chat = () => chatReply('{"answer": true, "confidence": 0.9}')
  t.equal((await g.evaluate(msg, scope)).outcome, 'OUT_OF_SCOPE', 'fail-open never admits a flagged request')
  clearSystemProperty(LLM_FAIL_OPEN_PROPERTY)
  server.chat = () => chatReply('{"answer": false}')
  t.equal((await g.evaluate(msg, scope)).outcome, 'ERROR', 'cleared: fails closed again')
})

t.test('the failOpen constructor argument overrides the property', async (t) => {
  server.chat = () => chatReply('{"answer": false}')
  const { g, rt } = guard({ failOpen: true })
  t.ok(warned(rt.logs, 'is fail-open'))
  t.equal((await g.evaluate(aiRequest({ message: 'order?' }), scope)).outcome, 'IN_SCOPE')
  setSystemProperty(LLM_FAIL_OPEN_PROPERTY, 'true')
  t.equal((await guard({ failOpen: false }).g.evaluate(aiRequest({ message: 'order?' }), scope)).outcome, 'ERROR')
})

t.test('the scope policy over the LLM tier', async (t) => {
  const rt = testRuntime({ decisionModel: model() })
  const p = createScopePolicy(
    {
      name: 'llm',
      source: 'yaml:x',
      version: '1',
      config: { agent: 'support', purpose: 'Orders', tier: 'LLM_CLASSIFIER', 'post-response-check': true }
    },
    rt
  )
  const ctx = (message: string): PolicyContext => ({
    phase: 'PRE_ADMISSION',
    request: aiRequest({ message, agentId: 'support' }),
    accumulatedResponse: ''
  })
  server.chat = () => chatReply('{"answer": true, "confidence": 0.97}')
  t.match(await p.evaluate(ctx('write a poem')), { decision: 'transform', request: { message: /I can only help/ } })
  server.chat = () => chatReply('nonsense')
  t.match(await p.evaluate(ctx('write a poem')), {
    decision: 'deny',
    reason: /^scope check errored: LLM scope classifier unparseable: /
  })
  t.same(
    await p.evaluate({ ...ctx('q'), phase: 'POST_RESPONSE', accumulatedResponse: 'some reply' }),
    { decision: 'admit' },
    'post-response: uncertain admits (rule 5)'
  )
  server.chat = () => chatReply('{"answer": true, "confidence": 0.97}')
  t.match(await p.evaluate({ ...ctx('q'), phase: 'POST_RESPONSE', accumulatedResponse: 'a poem' }), {
    decision: 'deny',
    reason: /^post-response: LLM classifier rejected as off-topic: /
  })
})

t.test('a plugin classifier answers instead of the model', async (t) => {
  const mk = (fn: () => Promise<unknown>) =>
    new LlmClassifierScopeGuardrail(
      testRuntime({ pluginClassifier: { name: 'acme/topics', classify: async () => await fn() } })
    )
  const r = aiRequest({ message: 'order?' })
  t.same(await mk(async () => ({ outcome: 'IN_SCOPE', reason: 'fine', similarity: 0.9 })).evaluate(r, scope), {
    outcome: 'IN_SCOPE',
    reason: 'fine',
    similarity: 0.9
  })
  t.same(await mk(async () => ({ outcome: 'OUT_OF_SCOPE', reason: 'poetry' })).evaluate(r, scope), {
    outcome: 'OUT_OF_SCOPE',
    reason: "classifier 'acme/topics' rejected as off-topic: poetry",
    similarity: NaN
  })
  t.same(await mk(async () => ({ outcome: 'ERROR', reason: 'model down' })).evaluate(r, scope), {
    outcome: 'ERROR',
    reason: "LLM scope classifier classifier 'acme/topics' errored: model down",
    similarity: NaN
  })
  t.same(await mk(async () => 'yes').evaluate(r, scope), {
    outcome: 'ERROR',
    reason: "LLM scope classifier classifier 'acme/topics' returned an invalid verdict",
    similarity: NaN
  })
  t.same(
    await mk(async () => {
      throw new Error('crashed')
    }).evaluate(r, scope),
    { outcome: 'ERROR', reason: "LLM scope classifier classifier 'acme/topics' failed: crashed", similarity: NaN }
  )
  setSystemProperty(LLM_FAIL_OPEN_PROPERTY, 'true')
  t.equal(
    (await mk(async () => 'junk').evaluate(r, scope)).outcome,
    'IN_SCOPE',
    'fail-open applies to plugin uncertainty too'
  )
})

t.test('parseAnswer', async (t) => {
  t.same(parseAnswer('{"answer": true, "confidence": 0.3}'), { kind: 'noul', value: true, confidence: 0.3 })
  t.same(parseAnswer('{"answer": true, "confidence": "high"}'), { kind: 'noul', value: true, confidence: null })
  t.same(parseAnswer(42), { kind: 'failed', reason: 'unparseable', detail: 'empty reply' })
})
