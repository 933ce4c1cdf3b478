import t from 'tap'
import { definePlugin, embedder, classifier } from 'uws-agent-platform/sdk'
import { aiRequest, type PolicyContext } from '../../runtime/contracts/index.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { installAreas } from '../../runtime/areas.js'
import { SCOPE } from '../../runtime/scope/key.js'
import { scopeRuntimeOf, scopePolicyFactory } from '../../runtime/scope/index.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { LexicalEmbedder, LEXICAL_DIMENSIONS } from '../../runtime/scope/lexical-embedder.js'
import { cosineSimilarity } from '../../runtime/scope/similarity.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, chatReply, tableEmbeddings } from '../helpers/openai-server.js'
import { scopeArea } from '../../runtime/scope/install.js'

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
const pre = (message: string, agentId = 'support'): PolicyContext => ({
  phase: 'PRE_ADMISSION',
  request: aiRequest({ message, agentId }),
  accumulatedResponse: ''
})
const manifest = (name: string): Manifest => ({
  name,
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
})

t.test('installAreas installs scope; default runtime has no embedder and no model', async (t) => {
  const tp = await startTestPlatform({}, { install: installAreas })
  t.teardown(tp.close)
  const rt = scopeRuntimeOf(tp.platform)
  t.equal(tp.platform.area(SCOPE).runtime, rt)
  t.equal(rt.embedder(), undefined)
  t.equal(rt.decisionModel(), undefined)
  t.equal(rt.pluginClassifier(), undefined)
  const p = createScopePolicy(
    { name: 's', source: 'yaml:x', version: '1', config: { agent: 'support', purpose: 'Orders' } },
    rt
  )
  const { reason, ...decision } = (await p.evaluate(pre('reverse a binary tree'))) as { reason?: string }
  t.same(
    decision,
    {
      decision: 'transform',
      request: {
        ...pre('').request,
        message: p.config.redirectMessage,
        metadata: { 'platform.scope.redirect': p.config.redirectMessage }
      }
    },
    'embedding tier degraded to rules'
  )
  t.match(reason, /^redirected: /)
  t.ok(
    tp.logs.some((l) => String(l.msg).includes('No embedding runtime available')),
    'the warning reaches the platform log'
  )
  await t.rejects(tp.platform.use(scopeArea), { message: 'area "scope" is installed twice' })
  t.equal(scopeRuntimeOf(tp.platform), rt, 'refusing the second install keeps the one runtime')
  const rules = createScopePolicy(
    {
      name: 'rules',
      source: 'yaml:x',
      version: '1',
      config: { purpose: 'Orders', tier: 'RULE_BASED', 'on-breach': 'DENY' }
    },
    rt
  )
  rules.evaluate(pre('gambling and python'))
  rules.evaluate(pre('where is my order'))
  rules.evaluate(pre('where is my order'))
  const metrics = await (await fetch(tp.url + '/metrics')).text()
  t.match(metrics, 'platform_scope_decisions_total{policy="rules",tier="RULE_BASED",decision="deny"} 1')
  t.match(metrics, 'platform_scope_decisions_total{policy="rules",tier="RULE_BASED",decision="admit"} 2')
  t.match(metrics, 'platform_scope_decisions_total{policy="s",tier="EMBEDDING_SIMILARITY",decision="transform"} 1')
  // verdicts are handed to prom-client when read: a second read counts nothing twice, later ones add
  rules.evaluate(pre('where is my order'))
  const again = await (await fetch(tp.url + '/metrics')).text()
  t.match(again, 'platform_scope_decisions_total{policy="rules",tier="RULE_BASED",decision="deny"} 1')
  t.match(again, 'platform_scope_decisions_total{policy="rules",tier="RULE_BASED",decision="admit"} 3')
  // the same policy rebuilt (a reloaded file) goes on counting under its labels
  createScopePolicy(
    { name: 'rules', source: 'yaml:x', version: '2', config: { purpose: 'Orders', tier: 'RULE_BASED' } },
    rt
  ).evaluate(pre('where is my order'))
  t.match(
    await (await fetch(tp.url + '/metrics')).text(),
    'platform_scope_decisions_total{policy="rules",tier="RULE_BASED",decision="admit"} 4'
  )
})

t.test('with the classifier none the LLM tier has no model and denies; the service cannot be changed', async (t) => {
  const tp = await startTestPlatform({}, { install: (p) => p.use(scopeArea) })
  t.teardown(tp.close)
  const p = createScopePolicy(
    {
      name: 's',
      source: 'yaml:x',
      version: '1',
      config: { purpose: 'Orders', tier: 'LLM_CLASSIFIER', 'on-breach': 'DENY' }
    },
    scopeRuntimeOf(tp.platform)
  )
  t.match(await p.evaluate(pre('hi')), {
    decision: 'deny',
    reason: 'scope check errored: LLM scope classifier no decision model available'
  })
  const service = tp.platform.area(SCOPE) as unknown as Record<string, unknown>
  t.throws(() => {
    service.decisionModel = {}
  }, TypeError)
  t.equal(service.decisionModel, undefined, 'no seat for a model set after install')
})

t.test('embedder lexical and openai, classifier openai, from configuration', async (t) => {
  server.embeddings = tableEmbeddings({ Orders: [1, 0], 'where is my order': [1, 0] }, [0, 1])
  server.chat = () => chatReply('{"answer": false, "confidence": 0.99}')
  const tp = await startTestPlatform(
    {
      'platform.ai.scope.embedder': 'openai',
      'platform.ai.scope.embeddings.base-url': server.url,
      'platform.ai.scope.embeddings.model': 'e',
      'platform.ai.scope.classifier': 'openai',
      'platform.ai.scope.chat.base-url': server.url,
      'platform.ai.scope.chat.model': 'c',
      'platform.ai.scope.chat.timeout-ms': 1500
    },
    { install: (p) => p.use(scopeArea) }
  )
  t.teardown(tp.close)
  const rt = scopeRuntimeOf(tp.platform)
  t.equal(rt.embedder()?.name, 'openai:e')
  t.equal(rt.decisionModel()?.name, 'openai-chat:c')
  t.equal(rt.decisionTimeoutMs, 1500)
  const factory = scopePolicyFactory(rt)
  const emb = factory({ name: 'e', source: 'yaml:x', version: '1', config: { purpose: 'Orders', 'on-breach': 'DENY' } })
  t.same(await emb.evaluate(pre('where is my order')), { decision: 'admit' })
  t.same(await emb.evaluate(pre('a poem')), { decision: 'deny', reason: 'message similarity 0.0 below threshold 0.45' })
  const llm = factory({
    name: 'l',
    source: 'yaml:x',
    version: '1',
    config: { purpose: 'Orders', tier: 'LLM_CLASSIFIER' }
  })
  t.same(await llm.evaluate(pre('where is my order')), { decision: 'admit' })

  const lex = await startTestPlatform({ 'platform.ai.scope.embedder': 'lexical' }, { install: (p) => p.use(scopeArea) })
  t.teardown(lex.close)
  t.equal(scopeRuntimeOf(lex.platform).embedder()?.name, 'lexical')
})

t.test('without a runtime argument the factory uses the bare runtime, not whichever platform runs', async (t) => {
  const tp = await startTestPlatform({ 'platform.ai.scope.embedder': 'lexical' }, { install: (p) => p.use(scopeArea) })
  t.teardown(tp.close)
  const d = {
    name: 'plain',
    source: 'yaml:x',
    version: '1',
    config: { purpose: 'Refunds for orders', 'on-breach': 'DENY' }
  }
  const bare = createScopePolicy(d)
  t.same(
    bare.evaluate(pre('write python code')),
    { decision: 'deny', reason: "message matched built-in hijacking probe: 'write python code'" },
    'no runtime given: degraded to the rules'
  )
  t.same(
    await bare.evaluate(pre('tell me a story')),
    { decision: 'admit' },
    'the rules, not the platform embedder, answered'
  )
  const p = createScopePolicy(d, scopeRuntimeOf(tp.platform))
  t.same(
    await p.evaluate(pre('refund my orders')),
    { decision: 'admit' },
    'the lexical embedder answered, not the rules'
  )
  t.match(await p.evaluate(pre('tell me a story')), {
    decision: 'deny',
    reason: /^message similarity 0\.0 below threshold 0\.45$/
  })
})

t.test('a built-in adapter without its URL stops start-up', async (t) => {
  await t.rejects(startTestPlatform({ 'platform.ai.scope.embedder': 'openai' }, { install: (p) => p.use(scopeArea) }), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: /platform.ai.scope.embeddings.base-url is required when the scope embedder is 'openai'/
  })
  await t.rejects(
    startTestPlatform(
      { 'platform.ai.scope.classifier': 'openai', 'platform.ai.scope.chat.base-url': server.url },
      { install: (p) => p.use(scopeArea) }
    ),
    { message: /platform.ai.scope.chat.model is required when the scope classifier is 'openai'/ }
  )
})

t.test('plugin embedders and classifiers selected by name, looked up per request', async (t) => {
  const tp = await startTestPlatform(
    {
      'platform.ai.scope.embedder': 'table',
      'platform.ai.scope.classifier': 'strict',
      'platform.ai.scope.embeddings.timeout-ms': 200
    },
    { install: (p) => p.use(scopeArea) }
  )
  t.teardown(tp.close)
  const rt = scopeRuntimeOf(tp.platform)
  t.equal(rt.embedder(), undefined, 'not loaded yet')
  const p = createScopePolicy(
    { name: 'e', source: 'yaml:x', version: '1', config: { purpose: 'Orders', 'on-breach': 'DENY' } },
    rt
  )
  t.same(
    await p.evaluate(pre('is python fun')),
    { decision: 'deny', reason: "message matched built-in hijacking probe: 'python'" },
    'degraded while no plugin embedder'
  )

  let hang = false
  const plugin = definePlugin({
    embedders: [
      embedder({
        name: 'table',
        embed: async (texts: string[]) => {
          if (hang) await new Promise(() => {})
          return texts.map((x) =>
            Float32Array.from(x === 'Orders' || x.includes('order') ? [1, 0] : [0, 1])
          ) as unknown as number[][]
        }
      })
    ],
    classifiers: [
      classifier({
        name: 'strict',
        classify: (request: { message: string }) => ({
          outcome: request.message.includes('order') ? 'IN_SCOPE' : 'OUT_OF_SCOPE',
          reason: 'keyword judge',
          similarity: 1
        })
      })
    ]
  })
  const caps = { log: tp.platform.logger }
  tp.platform.plugins.set('/tmp/acme', manifest('acme'), inlineInstance(plugin, caps))
  t.equal(rt.embedder()?.name, 'plugin:acme/table')
  t.equal(rt.pluginClassifier()?.name, 'acme/strict')
  t.same(await p.evaluate(pre('my order please')), { decision: 'admit' })
  t.same(await p.evaluate(pre('is python fun')), {
    decision: 'deny',
    reason: 'message similarity 0.0 below threshold 0.45'
  })

  const llm = createScopePolicy(
    {
      name: 'l',
      source: 'yaml:x',
      version: '1',
      config: { purpose: 'Orders', tier: 'LLM_CLASSIFIER', 'on-breach': 'DENY' }
    },
    rt
  )
  t.same(await llm.evaluate(pre('my order')), { decision: 'admit' })
  t.same(await llm.evaluate(pre('a poem')), {
    decision: 'deny',
    reason: "classifier 'acme/strict' rejected as off-topic: keyword judge"
  })

  hang = true
  const sem = createScopePolicy(
    { name: 's', source: 'yaml:x', version: '1', config: { purpose: 'Orders', tier: 'SEMANTIC_INTENT' } },
    rt
  )
  t.same(
    await sem.evaluate(pre('a poem')),
    { decision: 'deny', reason: 'scope check errored: failed to embed purpose' },
    'a plugin embedder that never answers times out'
  )

  tp.platform.plugins.remove('acme')
  t.equal(rt.embedder(), undefined, 'removed: no runtime again')
  t.same(await llm.evaluate(pre('my order')), {
    decision: 'deny',
    reason: 'scope check errored: LLM scope classifier no decision model available'
  })
})

t.test('the lexical embedder is lexical: shared words, not meaning', async (t) => {
  const e = new LexicalEmbedder()
  const [a, b, c, d, z] = await e.embed([
    'Refunds for my order',
    'refund my orders',
    'purchase reimbursement',
    'Refunds for my order',
    ''
  ])
  t.equal(a!.length, LEXICAL_DIMENSIONS)
  t.same(a, d, 'deterministic')
  t.ok(Math.abs(Math.hypot(...a!) - 1) < 1e-9, 'unit length')
  t.ok(cosineSimilarity(a!, b!) > 0.5, 'shared words and word pieces score high')
  t.ok(Math.abs(cosineSimilarity(a!, c!)) < 0.2, 'synonyms score near zero: it knows no meaning')
  t.equal(cosineSimilarity(a!, z!), 0, 'an empty text is the zero vector')
})
