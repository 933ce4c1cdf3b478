import t from 'tap'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { aiRequest, type PolicyContext } from '../../runtime/contracts/index.js'
import { scopeRuntimeOf, scopePolicyForAgent, confineSystemPrompt } from '../../runtime/scope/index.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { agentScopesOf } from '../../runtime/scope/key.js'
import { ScopePolicy } from '../../runtime/scope/scope-policy.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { startTestPlatform } from '../helpers/platform.js'
import { scopeArea } from '../../runtime/scope/install.js'

// The bundled plugins through the real plugin host (isolate sandbox): the demo agent's declared
// scope becomes a working policy, and the bundled scope classifier is chosen by name.
const REPO = fileURLToPath(new URL('../../', import.meta.url))
const tp = await startTestPlatform(
  { 'platform.plugins.dirs': [join(REPO, 'plugins')], 'platform.ai.scope.classifier': 'keyword-overlap' },
  {
    install: (p) => p.use(scopeArea)
  }
)
t.teardown(tp.close)
const pre = (message: string, agentId = 'demo'): PolicyContext => ({
  phase: 'PRE_ADMISSION',
  request: aiRequest({ message, agentId, systemPrompt: 'You are the platform guide.' }),
  accumulatedResponse: ''
})

t.test('the demo agent scope from the plugin host', async (t) => {
  const demo = tp.platform.plugins.agents().find((a) => a.name === 'demo')
  t.ok(demo, 'the demo agent is loaded')
  const p = scopePolicyForAgent(demo!, scopeRuntimeOf(tp.platform))!
  t.equal(p.name, 'scope::demo')
  t.equal(p.source, 'annotation:demo')
  t.same(p.evaluate(pre('How do plugins get sandboxed?')), { decision: 'admit' })
  t.match(p.evaluate(pre('I need medical advice about my knee')), {
    decision: 'transform',
    request: {
      message: demo!.scope!.redirectMessage as string,
      metadata: { 'platform.scope.redirect': demo!.scope!.redirectMessage }
    }
  })
  t.same(p.evaluate(pre('medical advice', 'someone-else')), { decision: 'admit' }, 'other agents pass')
  t.match(
    confineSystemPrompt(pre('x').request, [p]),
    /^# Scope confinement \(framework-enforced — do not override\)\n\nYou are strictly confined to the following purpose:\n {2}Answer questions about the agent platform/
  )
})

t.test('the bundled keyword-overlap classifier answers the LLM tier by name', async (t) => {
  const rt = scopeRuntimeOf(tp.platform)
  t.match(rt.pluginClassifier()?.name, /\/keyword-overlap$/)
  const p = createScopePolicy(
    {
      name: 'kw',
      source: 'yaml:x',
      version: '1',
      config: {
        agent: 'demo',
        purpose: 'plugins sandboxes MCP tools governance policies',
        'forbidden-topics': ['legal advice'],
        tier: 'LLM_CLASSIFIER',
        'on-breach': 'DENY'
      }
    },
    rt
  )
  t.same(await p.evaluate(pre('plugins sandboxes')), { decision: 'admit' })
  t.match(await p.evaluate(pre('I want legal advice')), {
    decision: 'deny',
    reason: /rejected as off-topic: forbidden topic: legal advice$/
  })
})

t.test(
  'agentScopesOf: the scope policy of each plugin agent, kept while unchanged, fail closed when invalid',
  async (t) => {
    const scopes = agentScopesOf(tp.platform)
    // the bundled agents that declare a scope (demo, and demo-fleet's panel and critic)
    const bundled = scopes.all().length
    t.equal(bundled, 3)
    const demo = scopes.of('demo')
    t.ok(demo instanceof ScopePolicy)
    t.equal(demo!.name, 'scope::demo')
    t.equal(scopes.of('nobody'), null)
    const manifest = {
      name: 'extra',
      version: '1.0.0',
      entry: 'index.js',
      sandbox: 'inline' as const,
      permissions: { net: [], kv: false, env: [] },
      limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
    }
    const def = definePlugin({
      agents: [agent({ name: 'broken', scope: { unrestricted: true } }), agent({ name: 'bare' })]
    })
    tp.platform.plugins.set('/tmp/extra', manifest, inlineInstance(def, { log: tp.platform.logger }))
    t.equal(scopes.of('demo'), demo, 'unchanged agent keeps its policy')
    t.equal(scopes.of('bare'), null, 'no scope declared, no policy')
    const broken = scopes.of('broken')!
    t.same(broken.evaluate(pre('hello', 'broken')), {
      decision: 'deny',
      reason: "scope check failed: agent 'broken' scope: 'justification' must not be blank when 'unrestricted' is true"
    })
    t.same(broken.evaluate(pre('hello', 'demo')), { decision: 'admit' })
    t.equal(scopes.all().length, bundled + 1, 'broken added, bare has none')
    tp.platform.plugins.remove('extra')
    t.equal(scopes.of('broken'), null)
  }
)
