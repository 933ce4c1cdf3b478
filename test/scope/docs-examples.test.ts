import t from 'tap'
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parse } from 'yaml'
import { loadConfig } from '../../runtime/areas.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { createScopePolicy } from '../../runtime/scope/factory.js'
import { scopePolicyForAgent, confineSystemPrompt } from '../../runtime/scope/index.js'
import { lintAgentScopes } from '../../runtime/scope/lint.js'

// The examples in docs/scope.md are run here, so the page cannot drift from the code.
const REPO = fileURLToPath(new URL('../../', import.meta.url))
const doc = readFileSync(join(REPO, 'docs/scope.md'), 'utf8')
const blocks = (lang: string) =>
  [...doc.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!)
const dir = mkdtempSync(join(tmpdir(), 'scope-docs-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the agent example loads and lints clean, and its preamble is the one shown', async (t) => {
  const src = blocks('js')[0]!.replace(
    "'uws-agent-platform/sdk'",
    `'${pathToFileURL(join(REPO, 'sdk/index.js')).href}'`
  )
  writeFileSync(join(dir, 'agent.mjs'), src)
  const def = (await import(pathToFileURL(join(dir, 'agent.mjs')).href)).default
  const a = def.agents[0]
  t.same(lintAgentScopes([a]), [])
  const p = scopePolicyForAgent(a)!
  t.equal(p.config.tier, 'EMBEDDING_SIMILARITY')
  const start = doc.indexOf('```\n# Scope confinement') + 4
  const shown = doc.slice(start, doc.indexOf('```', start)).trimEnd()
  t.equal(confineSystemPrompt(aiRequest({ message: 'm', agentId: 'support' }), [p]).trimEnd(), shown)
})

t.test('the YAML policy example builds a working scope policy', async (t) => {
  const y = parse(blocks('yaml')[0]!) as { policies: { name: string; type: string; config: Record<string, unknown> }[] }
  const entry = y.policies[0]!
  t.equal(entry.type, 'scope')
  const p = createScopePolicy({ name: entry.name, source: 'yaml:docs', version: '1', config: entry.config })
  t.same(
    p.evaluate({
      phase: 'PRE_ADMISSION',
      request: aiRequest({ message: 'I need legal advice', agentId: 'support' }),
      accumulatedResponse: ''
    }),
    { decision: 'deny', reason: "message references forbidden topic: 'legal advice'" }
  )
})

t.test('the platform.yaml example uses real configuration keys', async (t) => {
  const file = join(dir, 'platform.yaml')
  writeFileSync(
    file,
    blocks('yaml').find((b) => b.startsWith('# platform.yaml'))!
  )
  const cfg = loadConfig({ file, env: {} })
  t.equal(cfg.get('platform.ai.scope.embedder'), 'openai')
  t.equal(cfg.get('platform.ai.scope.embeddings.model'), 'nomic-embed-text')
  t.equal(cfg.get('platform.ai.scope.chat.timeout-ms'), 3000)
})
