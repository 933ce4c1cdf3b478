import t from 'tap'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { lintAgentScopes, lintPluginDirectory } from '../../runtime/scope/lint.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

t.test('spec rule 8: every bundled agent declares a scope, unrestricted only with a justification', async (t) => {
  const { agents, findings } = await lintPluginDirectory(join(REPO, 'plugins'))
  t.comment(`${agents} bundled agent(s) linted under plugins/`)
  t.ok(agents >= 1, 'the bundled demo agent is among them')
  t.same(findings, [], findings.map((f) => `${f.plugin ?? '?'}/${f.agent} ${f.problem}`).join('; ') || 'no findings')
})

t.test('lintAgentScopes', async (t) => {
  t.same(
    lintAgentScopes([
      { name: 'ok', plugin: 'p', scope: { purpose: 'Orders' } },
      {
        name: 'open',
        plugin: 'p',
        scope: { unrestricted: true, justification: 'A playground that accepts anything, on purpose.' }
      },
      { name: 'bare', plugin: 'p' },
      { name: 'lazy', plugin: 'p', scope: { unrestricted: true } },
      { name: 'blank', scope: { unrestricted: true, justification: '   ' } },
      { name: 'typo', plugin: 'p', scope: { purpose: 'x', tier: 'FAST' } },
      { name: 'aimless', plugin: 'p', scope: {} }
    ]),
    [
      { agent: 'bare', plugin: 'p', problem: 'declares no scope (agent({ scope: {...} }))' },
      { agent: 'lazy', plugin: 'p', problem: 'is unrestricted without a justification' },
      { agent: 'blank', plugin: null, problem: 'is unrestricted without a justification' },
      {
        agent: 'typo',
        plugin: 'p',
        problem:
          "agent 'typo' scope: 'tier' must be one of RULE_BASED, EMBEDDING_SIMILARITY, SEMANTIC_INTENT, LLM_CLASSIFIER (got \"FAST\")"
      },
      {
        agent: 'aimless',
        plugin: 'p',
        problem: "agent 'aimless' scope: 'purpose' is required unless 'unrestricted' is true"
      }
    ]
  )
})

t.test('lintPluginDirectory loads plugin folders and reports offenders', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'scope-lint-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const sdk = pathToFileURL(join(REPO, 'sdk/index.js')).href
  const plugin = (folder: string, body: string) => {
    mkdirSync(join(dir, folder))
    writeFileSync(
      join(dir, folder, 'plugin.json'),
      JSON.stringify({ name: folder, version: '1.0.0', entry: 'index.mjs' })
    )
    writeFileSync(
      join(dir, folder, 'index.mjs'),
      `import { definePlugin, agent } from '${sdk}'\nexport default definePlugin(${body})\n`
    )
  }
  plugin(
    'good',
    "{ agents: [agent({ name: 'support', scope: { purpose: 'Orders', forbiddenTopics: ['gambling'] } })] }"
  )
  plugin('bad', "{ agents: [agent({ name: 'chatty' }), agent({ name: 'open', scope: { unrestricted: true } })] }")
  plugin('tools-only', '{ tools: [] }')
  mkdirSync(join(dir, 'broken'))
  writeFileSync(join(dir, 'broken', 'plugin.json'), JSON.stringify({ name: 'broken', entry: 'index.mjs' }))
  writeFileSync(join(dir, 'broken', 'index.mjs'), 'export default 42\n')
  mkdirSync(join(dir, 'not-a-plugin'))
  writeFileSync(join(dir, 'README.md'), 'x')
  const { agents, findings } = await lintPluginDirectory(dir)
  t.equal(agents, 3)
  t.same(findings, [
    {
      agent: '*',
      plugin: 'broken',
      problem: 'could not be loaded for the scope lint: the entry module must default-export definePlugin({...})'
    },
    { agent: 'chatty', plugin: 'bad', problem: 'declares no scope (agent({ scope: {...} }))' },
    { agent: 'open', plugin: 'bad', problem: 'is unrestricted without a justification' }
  ])
  t.same(await lintPluginDirectory(join(dir, 'missing')), { agents: 0, findings: [] })
})
