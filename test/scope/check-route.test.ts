import t from 'tap'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'
import { OpenAiServer, tableEmbeddings } from '../helpers/openai-server.js'

// A YAML `type: scope` policy in the served platform: /check with an agent_id exercises that
// agent's scope; other agents pass it; a bad scope entry stops the file from loading.
const server = await new OpenAiServer().start()
t.teardown(() => server.close())
server.embeddings = tableEmbeddings(
  { 'Customer support for orders': [1, 0], 'where is my order': [0.9, Math.sqrt(1 - 0.81)] },
  [0, 1]
)
const dir = mkdtempSync(join(tmpdir(), 'scope-check-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const file = join(dir, 'policies.yaml')
writeFileSync(
  file,
  `version: "7"
policies:
  - name: support-scope
    type: scope
    config:
      agent: support
      purpose: Customer support for orders
      forbidden-topics: [gambling]
      on-breach: DENY
      tier: RULE_BASED
  - name: billing-scope
    type: scope
    config:
      agent: billing
      purpose: Customer support for orders
      tier: EMBEDDING_SIMILARITY
`
)
const tp = await startTestPlatform(
  {
    'platform.ai.governance.policy-files': [file],
    'platform.ai.scope.embedder': 'openai',
    'platform.ai.scope.embeddings.base-url': server.url,
    'platform.ai.scope.embeddings.model': 'm'
  },
  { install: installAreas }
)
t.teardown(tp.close)

async function check(body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(tp.url + '/api/admin/governance/check', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  t.equal(r.status, 200)
  return (await r.json()) as Record<string, unknown>
}

t.test('/check runs the agent scope', async (t) => {
  t.match(await check({ agent_id: 'support', action: 'chat', context: { message: 'any gambling tips?' } }), {
    allowed: false,
    decision: 'deny',
    reason: "message references forbidden topic: 'gambling'",
    matched_policy: 'support-scope',
    matched_source: `yaml:${file}`
  })
  t.match(await check({ agent_id: 'support', action: 'chat', context: { message: 'where is my order' } }), {
    allowed: true,
    decision: 'allow',
    reason: ''
  })
  t.match(
    await check({ agent_id: 'other', action: 'chat', context: { message: 'any gambling tips?' } }),
    { allowed: true, decision: 'allow' },
    'another agent passes untouched'
  )
  t.match(
    await check({ agent_id: 'billing', action: 'chat', context: { message: 'where is my order' } }),
    { allowed: true, decision: 'allow' },
    'embedding tier through the configured server'
  )
  t.match(
    await check({ agent_id: 'billing', action: 'chat', context: { message: 'sing me a song' } }),
    { allowed: true, decision: 'transform', matched_policy: 'billing-scope' },
    'polite redirect is a transform'
  )
})

t.test('a policy file with a broken scope entry fails to load, naming the entry', async (t) => {
  const bad = join(dir, 'bad.yaml')
  writeFileSync(
    bad,
    'policies:\n  - name: broken\n    type: scope\n    config: {agent: support, tier: FAST, purpose: p}\n'
  )
  await t.rejects(
    startTestPlatform({ 'platform.ai.governance.policy-files': [bad] }, { install: installAreas }),
    /broken.*'tier' must be one of RULE_BASED/s
  )
})
