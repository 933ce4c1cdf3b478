import t from 'tap'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { loadIsolate, loadWorker, type LoadSpec, type SandboxKind } from '../../runtime/plugins/index.js'
import { aiRequest, type PolicyContext } from '../../runtime/contracts/index.js'
import { scopeRuntimeOf } from '../../runtime/scope/index.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { scopeArea } from '../../runtime/scope/install.js'

// A third-party scope plugin in the real sandboxes: the embedder and the classifier cross the
// sandbox boundary as plain data and are chosen by name in configuration.
const dir = mkdtempSync(join(tmpdir(), 'scope-plugin-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
writeFileSync(
  join(dir, 'index.js'),
  `
import { definePlugin, embedder, classifier } from 'uws-agent-platform/sdk'
const vec = (text) => /order|parcel/i.test(text) ? [1, 0] : /poem|song/i.test(text) ? [0, 1] : [0.5, 0.5]
export default definePlugin({
  embedders: [embedder({ name: 'keywords', embed: (texts) => texts.map(vec) })],
  classifiers: [classifier({ name: 'judge', classify: (request, scope) => request.message.includes('poem')
    ? { outcome: 'OUT_OF_SCOPE', reason: 'poetry is not ' + scope.purpose, similarity: 0 }
    : { outcome: 'IN_SCOPE', reason: '', similarity: 1 } })]
})
`
)

const tp = await startTestPlatform(
  { 'platform.ai.scope.embedder': 'keywords', 'platform.ai.scope.classifier': 'judge' },
  { install: (p) => p.use(scopeArea) }
)
t.teardown(tp.close)
const pre = (message: string): PolicyContext => ({
  phase: 'PRE_ADMISSION',
  request: aiRequest({ message, agentId: 'support' }),
  accumulatedResponse: ''
})

function spec(sandbox: SandboxKind): LoadSpec {
  const limits = { memoryMb: 32, timeoutMs: 2000, concurrency: 2 }
  const permissions = { net: [], kv: false, env: [] }
  return {
    dir,
    entry: join(dir, 'index.js'),
    manifest: { name: 'scope-kit', version: '1.0.0', entry: 'index.js', sandbox, permissions, limits },
    grant: { sandbox, permissions, limits },
    capabilities: { log: tp.platform.logger },
    metrics: tp.platform.metrics
  }
}

for (const [kind, load] of [
  ['isolate', loadIsolate],
  ['worker', loadWorker]
] as const) {
  t.test(`${kind} tier: plugin embedder and classifier selected by name`, async (t) => {
    const inst = await load(spec(kind))
    tp.platform.plugins.set(dir, spec(kind).manifest, inst)
    t.teardown(() => {
      tp.platform.plugins.remove('scope-kit')
    })
    const rt = scopeRuntimeOf(tp.platform)
    t.equal(rt.embedder()?.name, 'plugin:scope-kit/keywords')
    const emb = createScopePolicy(
      {
        name: 'e',
        source: 'yaml:x',
        version: '1',
        config: { agent: 'support', purpose: 'order tracking', 'forbidden-topics': ['poem'], 'on-breach': 'DENY' }
      },
      rt
    )
    t.same(await emb.evaluate(pre('where is my parcel')), { decision: 'admit' })
    t.same(await emb.evaluate(pre('write a poem')), {
      decision: 'deny',
      reason: "message is closer to forbidden topic 'poem' (sim=1.0) than to purpose (sim=0.0)"
    })
    const llm = createScopePolicy(
      {
        name: 'l',
        source: 'yaml:x',
        version: '1',
        config: { agent: 'support', purpose: 'order tracking', tier: 'LLM_CLASSIFIER', 'on-breach': 'DENY' }
      },
      rt
    )
    t.same(await llm.evaluate(pre('where is my parcel')), { decision: 'admit' })
    t.same(await llm.evaluate(pre('a poem please')), {
      decision: 'deny',
      reason: "classifier 'scope-kit/judge' rejected as off-topic: poetry is not order tracking"
    })
  })
}
