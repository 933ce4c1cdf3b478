import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest } from '../../runtime/contracts/index.js'

// the whole served platform: bundled plugins in their sandboxes, a policy file using a plugin's
// policy type, and MCP tools/call passing the governance gate
const repo = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'gov-e2e-'))
const file = join(dir, 'policies.yaml')
writeFileSync(
  file,
  `policies:
  - name: short-prompts
    type: word-limit
    config: {max: 5}
  - name: no-rm
    type: deny-list
    config: {phrases: ["rm -rf"]}
`
)
const tp = await startTestPlatform(
  { 'platform.plugins.dirs': [join(repo, 'plugins')], 'platform.ai.governance.policy-files': [file] },
  { install: installAreas }
)
t.teardown(tp.close)

const MODERN = '2026-07-28'
async function callTool(name: string, args: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${tp.url}/platform/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
      }
    })
  })
  return (await r.json()) as Record<string, unknown>
}

t.test('a plugin policy type (isolate sandbox) loads from YAML and decides', async (t) => {
  const svc = governanceOf(tp.platform)!
  t.equal(svc.registry.origin('word-limit'), 'plugin:policy-word-limit')
  const d = await svc.gate.admit('t', aiRequest({ message: 'one two three four five six seven' }))
  t.same(d.admitted ? null : [d.policy.name, d.reason], [
    'short-prompts',
    'message has 7 words, more than the limit of 5'
  ])
  const chk = (await fetch(`${tp.url}/api/admin/governance/check`, {
    method: 'POST',
    body: JSON.stringify({ context: { message: 'a b c' } })
  }).then((r) => r.json())) as { allowed: boolean }
  t.equal(chk.allowed, true)
})

t.test('MCP tools/call passes the governance gate: a deny is a JSON-RPC error naming policy and reason', async (t) => {
  const denied = await callTool('slugify', { text: 'rm -rf everything' })
  t.match(denied.error, {
    message: "Tool 'slugify' denied by policy 'no-rm': deny-list: tool argument matched a denied phrase"
  })
  const ok = await callTool('slugify', { text: 'Hello World' })
  t.notOk(ok.error)
  t.match(JSON.stringify(ok.result), /hello-world/)
  const e = governanceOf(tp.platform)!
    .decisionLog.recent(5)
    .find((x) => x.context_snapshot.tool_name === 'slugify')
  t.equal(e?.context_snapshot.action, 'call_tool')
})
