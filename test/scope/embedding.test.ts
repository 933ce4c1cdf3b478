import t from 'tap'
import { aiRequest, type PolicyContext } from '../../runtime/contracts/index.js'
import { EmbeddingScopeGuardrail } from '../../runtime/scope/embedding.js'
import { OpenAiEmbedder } from '../../runtime/scope/openai-embedder.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { scopeFromAgentAttributes } from '../../runtime/scope/scope-config.js'
import { cosineSimilarity, round4 } from '../../runtime/scope/similarity.js'
import { type ScopeConfig } from '../../runtime/scope/contract.js'
import { OpenAiServer, tableEmbeddings } from '../helpers/openai-server.js'
import { testRuntime, warned } from '../helpers/scope-runtime.js'

const server = await new OpenAiServer().start()
t.teardown(() => server.close())

const PURPOSE = 'Customer support for orders and billing'
const TABLE: Record<string, number[]> = {
  [PURPOSE]: [1, 0, 0],
  'medical advice': [0, 1, 0],
  'where is my order': [0.8, 0.6, 0], // purpose 0.8, medical 0.6
  'my tooth hurts, what pills': [0.6, 0.8, 0], // purpose 0.6, medical 0.8
  'tell me a joke': [0.3, 0.1, Math.sqrt(0.9)], // purpose 0.3, medical 0.1
  'orders please': [0.45, 0, Math.sqrt(1 - 0.45 * 0.45)] // exactly the threshold
}
const scope: ScopeConfig = scopeFromAgentAttributes({ purpose: PURPOSE, forbiddenTopics: ['Medical Advice'] })
const embedder = (timeoutMs = 2000) =>
  new OpenAiEmbedder({ baseUrl: server.url, model: 'test-embed', apiKey: 'sk-test', timeoutMs })
const fresh = () => {
  const rt = testRuntime({ embedder: embedder() })
  return { rt, g: new EmbeddingScopeGuardrail(rt) }
}
t.beforeEach(() => {
  server.reset()
  server.embeddings = tableEmbeddings(TABLE)
})

t.test('cosine similarity edge cases (reference)', async (t) => {
  t.equal(cosineSimilarity([1, 0], [1, 0, 0]), -1, 'length mismatch')
  t.equal(cosineSimilarity([], []), -1, 'empty')
  t.equal(cosineSimilarity([0, 0], [1, 0]), 0, 'zero norm')
  t.ok(Math.abs(cosineSimilarity([1, 1], [2, 2]) - 1) < 1e-12)
  t.equal(round4(0.123456), '0.1235')
  t.equal(round4(0.5), '0.5')
  t.equal(round4(1), '1.0')
  t.equal(round4(0), '0.0')
  t.equal(round4(-0.00001), '0.0')
  t.equal(round4(0.00012), '1.0E-4')
})

t.test('in scope: similarity to the purpose at or above the threshold', async (t) => {
  const { g } = fresh()
  t.equal(g.tier(), 'EMBEDDING_SIMILARITY')
  const v = await g.evaluate(aiRequest({ message: 'where is my order' }), scope)
  t.equal(v.outcome, 'IN_SCOPE')
  t.equal(round4(v.similarity), '0.8')
  t.equal(
    (await g.evaluate(aiRequest({ message: 'orders please' }), scope)).outcome,
    'IN_SCOPE',
    'equal to the threshold is in scope'
  )
  const call = server.on('/embeddings')[0]
  t.equal(call.model, 'test-embed')
  t.equal(server.calls[0]!.auth, 'Bearer sk-test')
})

t.test('a forbidden topic closer than the purpose wins, with the reference reason', async (t) => {
  const { g } = fresh()
  t.same(await g.evaluate(aiRequest({ message: 'my tooth hurts, what pills' }), scope), {
    outcome: 'OUT_OF_SCOPE',
    reason: "message is closer to forbidden topic 'Medical Advice' (sim=0.8) than to purpose (sim=0.6)",
    similarity: 0.6
  })
  t.ok(
    server.on('/embeddings').some((b) => b.input.includes('medical advice')),
    'topics are embedded lowercased'
  )
})

t.test('below the threshold, with the reference reason', async (t) => {
  const { g } = fresh()
  const v = await g.evaluate(aiRequest({ message: 'tell me a joke' }), scope)
  t.equal(v.outcome, 'OUT_OF_SCOPE')
  t.equal(v.reason, 'message similarity 0.3 below threshold 0.45')
  const strict = scopeFromAgentAttributes({ purpose: PURPOSE, similarityThreshold: 0.85 })
  t.equal(
    (await g.evaluate(aiRequest({ message: 'where is my order' }), strict)).reason,
    'message similarity 0.8 below threshold 0.85'
  )
})

t.test('purpose and topic vectors are cached per string; the message is embedded every time', async (t) => {
  const { g } = fresh()
  await g.evaluate(aiRequest({ message: 'where is my order' }), scope)
  const first = server.on('/embeddings').flatMap((b) => b.input)
  t.same(first.sort(), [PURPOSE, 'medical advice', 'where is my order'].sort())
  server.reset()
  await g.evaluate(aiRequest({ message: 'where is my order' }), scope)
  await g.evaluate(aiRequest({ message: 'tell me a joke' }), scope)
  t.same(
    server.on('/embeddings').flatMap((b) => b.input),
    ['where is my order', 'tell me a joke']
  )
})

t.test('blank message and unrestricted scope are in scope without a call', async (t) => {
  const { g } = fresh()
  t.equal((g.evaluate(aiRequest({ message: '  ' }), scope) as { outcome: string }).outcome, 'IN_SCOPE')
  t.equal(
    (
      g.evaluate(aiRequest({ message: 'x' }), scopeFromAgentAttributes({ unrestricted: true, justification: 'j' })) as {
        outcome: string
      }
    ).outcome,
    'IN_SCOPE'
  )
  t.equal(server.calls.length, 0)
})

t.test('no embedding runtime: degrade to the rule-based tier per request, with a warning (rule 1)', async (t) => {
  const rt = testRuntime()
  const g = new EmbeddingScopeGuardrail(rt)
  const v = g.evaluate(aiRequest({ message: 'is python hard?' }), scope)
  t.same(
    v,
    { outcome: 'OUT_OF_SCOPE', reason: "message matched built-in hijacking probe: 'python'", similarity: NaN },
    'answered synchronously by the rules'
  )
  t.equal((g.evaluate(aiRequest({ message: 'where is my order' }), scope) as { outcome: string }).outcome, 'IN_SCOPE')
  t.ok(warned(rt.logs, 'No embedding runtime available'))
  t.equal(rt.logs.filter((l) => l.level === 40).length, 2, 'one warning per degraded request')
})

const failures: [string, () => void][] = [
  [
    'HTTP 500',
    () => {
      server.embeddings = () => ({ status: 500, json: { error: { message: 'model crashed' } } })
    }
  ],
  [
    'HTTP 429',
    () => {
      server.embeddings = () => ({ status: 429, json: { error: { message: 'slow down' } } })
    }
  ],
  [
    'a non-JSON body',
    () => {
      server.embeddings = () => ({ raw: '<html>gateway</html>' })
    }
  ],
  [
    'no data array',
    () => {
      server.embeddings = () => ({ json: { object: 'list' } })
    }
  ],
  [
    'too few vectors',
    () => {
      server.embeddings = () => ({ json: { data: [] } })
    }
  ],
  [
    'a vector of strings',
    () => {
      server.embeddings = (input) => ({ json: { data: input.map((_, i) => ({ index: i, embedding: ['a', 'b'] })) } })
    }
  ],
  [
    'an empty vector',
    () => {
      server.embeddings = (input) => ({ json: { data: input.map((_, i) => ({ index: i, embedding: [] })) } })
    }
  ],
  [
    'an index out of range',
    () => {
      server.embeddings = (input) => ({ json: { data: input.map(() => ({ index: 5, embedding: [1] })) } })
    }
  ],
  [
    'a NaN-free but null vector entry',
    () => {
      server.embeddings = (input) => ({ json: { data: input.map((_, i) => ({ index: i, embedding: [1, null] })) } })
    }
  ],
  [
    'a timeout',
    () => {
      server.embeddings = () => ({ hang: true })
    }
  ]
]

t.test('a failed embedding call degrades the embedding tier to rule-based (reference §6)', async (t) => {
  for (const [what, arrange] of failures) {
    arrange()
    const rt = testRuntime({ embedder: new OpenAiEmbedder({ baseUrl: server.url, model: 'm', timeoutMs: 150 }) })
    const g = new EmbeddingScopeGuardrail(rt)
    t.same(
      await g.evaluate(aiRequest({ message: 'reverse a linked list' }), scope),
      { outcome: 'OUT_OF_SCOPE', reason: "message matched built-in hijacking probe: 'linked list'", similarity: NaN },
      `${what}: rules still screen`
    )
    t.equal(
      (await g.evaluate(aiRequest({ message: 'tell me a joke' }), scope)).outcome,
      'IN_SCOPE',
      `${what}: rules admit what they do not flag`
    )
    t.ok(warned(rt.logs, 'degrades to RULE_BASED'), `${what}: warned`)
  }
})

t.test('an unreachable server degrades too', async (t) => {
  const rt = testRuntime({
    embedder: new OpenAiEmbedder({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000 })
  })
  const v = await new EmbeddingScopeGuardrail(rt).evaluate(aiRequest({ message: 'should I buy bitcoin' }), scope)
  t.equal(v.reason, "message matched built-in hijacking probe: 'buy bitcoin'")
})

t.test('the scope policy over the embedding tier', async (t) => {
  const rt = testRuntime({ embedder: embedder() })
  const p = createScopePolicy(
    {
      name: 'sp',
      source: 'yaml:p.yaml',
      version: '1',
      config: { agent: 'support', purpose: PURPOSE, 'forbidden-topics': ['medical advice'], 'on-breach': 'DENY' }
    },
    rt
  )
  const ctx = (message: string): PolicyContext => ({
    phase: 'PRE_ADMISSION',
    request: aiRequest({ message, agentId: 'support' }),
    accumulatedResponse: ''
  })
  t.same(await p.evaluate(ctx('where is my order')), { decision: 'admit' })
  t.same(await p.evaluate(ctx('tell me a joke')), {
    decision: 'deny',
    reason: 'message similarity 0.3 below threshold 0.45'
  })
})

t.test('the OpenAI embeddings adapter checks whole batches', async (t) => {
  const e = embedder()
  t.same(await e.embed([]), [], 'no call for no texts')
  server.embeddings = (input) => ({
    json: {
      data: input
        .map((_, i) => ({ index: input.length - 1 - i, embedding: [input.length - 1 - i] }))
        .reverse()
        .reverse()
    }
  })
  t.same(await e.embed(['a', 'b']), [[0], [1]], 'items are placed by index')
  server.embeddings = (input) => ({ json: { data: input.map(() => ({ index: 0, embedding: [1] })) } })
  await t.rejects(e.embed(['a', 'b']), {
    code: 'PLT_ERR_EMBEDDER_FAILED',
    params: { reason: 'invalid' },
    message: /bad index 0/
  })
  server.embeddings = (input) => ({
    json: { data: input.map((_, i) => ({ index: i, embedding: i === 0 ? [1] : [1, 2] })) }
  })
  await t.rejects(e.embed(['a', 'b']), { message: 'embeddings reply mixes vector lengths' })
  server.embeddings = () => ({ status: 429, json: {} })
  await t.rejects(e.embed(['a']), { code: 'PLT_ERR_EMBEDDER_FAILED', params: { reason: 'capacity' } })
  server.embeddings = () => ({ hang: true })
  await t.rejects(embedder(100).embed(['a']), {
    params: { reason: 'timeout' },
    message: /no reply from .* within 100 ms/
  })
  server.embeddings = () => ({ raw: 'not json' })
  await t.rejects(e.embed(['a']), { code: 'PLT_ERR_EMBEDDER_FAILED', params: { reason: 'unparseable' } })
  t.equal(e.name, 'openai:test-embed')
})
