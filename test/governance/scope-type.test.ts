import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { startTestPlatform } from '../helpers/platform.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'

const dir = mkdtempSync(join(tmpdir(), 'gov-scope-'))
const file = join(dir, 'scope.yaml')
writeFileSync(
  file,
  `policies:
  - name: support-scope
    type: scope
    config:
      agent: support
      purpose: customer support for our billing product
      forbidden-topics: [crypto]
      on-breach: DENY
      tier: RULE_BASED
`
)
const manifest = (name: string): Manifest => ({
  name,
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 4 }
})
const agents = definePlugin({
  agents: [
    agent({
      name: 'chef',
      description: 'cooks',
      scope: { purpose: 'cooking recipes', forbiddenTopics: ['politics'], onBreach: 'DENY', tier: 'RULE_BASED' }
    }),
    agent({ name: 'broken', description: 'bad scope', scope: { unrestricted: true } })
  ]
})

const tp = await startTestPlatform(
  { 'platform.ai.governance.policy-files': [file] },
  {
    install: async (p) => {
      p.plugins.set('/agents', manifest('agents'), inlineInstance(agents, { log: p.logger }))
      await p.use(scopeArea)
      await p.use(governanceArea)
    }
  }
)
t.teardown(tp.close)
const check = async (body: unknown) =>
  (await fetch(`${tp.url}/api/admin/governance/check`, { method: 'POST', body: JSON.stringify(body) }).then((r) =>
    r.json()
  )) as { allowed: boolean; reason: string; matched_policy: string | null }

t.test('YAML type: scope confines its agent; /check with agent_id exercises it; other agents pass', async (t) => {
  t.equal(governanceOf(tp.platform)!.registry.origin('scope'), 'builtin')
  const d = await check({ agent_id: 'support', context: { message: 'what about crypto prices' } })
  t.same(
    [d.allowed, d.matched_policy, d.reason],
    [false, 'support-scope', "message references forbidden topic: 'crypto'"]
  )
  t.equal((await check({ agent_id: 'other', context: { message: 'what about crypto prices' } })).allowed, true)
  t.equal((await check({ agent_id: 'support', context: { message: 'my invoice is wrong' } })).allowed, true)
})

t.test('scopes agents declare join the chain as scope::<agent>; an invalid one denies its agent', async (t) => {
  const svc = governanceOf(tp.platform)!
  const names = svc.chain.policies.map((p) => `${p.name}@${p.source}`)
  t.ok(names.includes('scope::chef@annotation:chef'))
  const d = await svc.gate.admit('t', aiRequest({ message: 'talk politics', agentId: 'chef' }))
  t.same(d.admitted ? null : d.policy.name, 'scope::chef')
  const b = await svc.gate.admit('t', aiRequest({ message: 'hi', agentId: 'broken' }))
  t.match(b.admitted ? '' : b.reason, /agent 'broken' scope is invalid/)
  t.equal((await svc.gate.admit('t', aiRequest({ message: 'talk politics', agentId: 'someone' }))).admitted, true)
  tp.platform.plugins.remove('agents')
  t.notOk(
    svc.chain.policies.some((p) => p.name === 'scope::chef'),
    'removed with its plugin'
  )
})

t.test('a bad scope entry fails at load naming the entry', async (t) => {
  const svc = governanceOf(tp.platform)!
  t.throws(
    () =>
      svc.parse('yaml', 'yaml:bad', 'policies:\n  - {name: s, type: scope, config: {agent: a, tier: RULE_BASED}}\n'),
    /failed to build policies\[0\] \('s'\) in yaml:bad: .*purpose/
  )
})
