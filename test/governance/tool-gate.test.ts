import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { toolArgsPreview, toolCallRequest } from '../../runtime/governance/tool-gate.js'
import { gateOf, TOOL_CALL_GATE, type ToolCallRequest } from '../../runtime/contracts/index.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const installGovernance = (p: Platform) => installAreas(p, [scopeArea, governanceArea])

const dir = mkdtempSync(join(tmpdir(), 'gov-tool-'))
const file = join(dir, 'tools.yaml')
writeFileSync(
  file,
  `name: tool-rules
rules:
  - name: block-delete-database
    condition: {field: tool_name, operator: eq, value: delete_database}
    action: deny
    priority: 100
    message: Deleting databases is not allowed
  - name: only-tool-calls
    condition: {field: action, operator: ne, value: call_tool}
    action: deny
`
)
const args = join(dir, 'args.yaml')
writeFileSync(args, 'policies:\n  - {name: no-rm, type: deny-list, config: {phrases: ["rm -rf"]}}\n')

const tp = await startTestPlatform(
  { 'platform.ai.governance.policy-files': [file, args] },
  { install: installGovernance }
)
t.teardown(tp.close)

// the one gate governance added at the core's extension point
const toolCallGate = (req: ToolCallRequest) => gateOf(tp.platform.extensions(TOOL_CALL_GATE))(req)

t.test('governance installs the platform tool-call gate', async (t) => {
  t.equal(tp.platform.extensions(TOOL_CALL_GATE).length, 1)
})

t.test(
  'the call_tool request: message, metadata tool_name, action, tool_args and a 200-character preview',
  async (t) => {
    const r = toolCallRequest({
      toolName: 'search',
      args: { q: 'x'.repeat(300) },
      agentId: 'agent-1',
      principal: 'alice',
      sessionId: 'sess'
    })
    t.equal(r.message, 'call_tool:search')
    t.same([r.agentId, r.userId, r.sessionId], ['agent-1', 'alice', 'sess'])
    t.same(Object.keys(r.metadata), ['tool_name', 'action', 'tool_args', 'tool_args_preview'])
    t.equal(r.metadata.tool_name, 'search')
    t.equal(r.metadata.action, 'call_tool')
    t.same(r.metadata.tool_args, { q: 'x'.repeat(300) })
    t.equal(r.metadata.tool_args_preview, JSON.stringify({ q: 'x'.repeat(300) }).slice(0, 200) + '…')
    t.equal(toolArgsPreview({ a: 1 }), '{"a":1}', 'short previews are not cut')
    t.equal(toolCallRequest({ toolName: 'n', args: undefined }).metadata.tool_args_preview, '{}')
  }
)

t.test('a denied tool call names the policy and reason; admitted calls pass', async (t) => {
  const gate = toolCallGate
  t.same(await gate({ toolName: 'delete_database', args: {} }), {
    admitted: false,
    policy: 'tool-rules',
    reason: 'Deleting databases is not allowed'
  })
  t.same(await gate({ toolName: 'shell', args: { cmd: 'rm -rf /' } }), {
    admitted: false,
    policy: 'no-rm',
    reason: 'deny-list: tool argument matched a denied phrase'
  })
  t.same(await gate({ toolName: 'search', args: { q: 'weather' } }), { admitted: true })
  const e = governanceOf(tp.platform)!.decisionLog.recent(1)[0]!
  t.same(
    [e.context_snapshot.message, e.context_snapshot.tool_name, e.context_snapshot.action, e.context_snapshot.tool_args],
    ['call_tool:search', 'search', 'call_tool', '{"q":"weather"}']
  )
})

t.test('a throwing policy denies the tool call (fail closed)', async (t) => {
  const svc = governanceOf(tp.platform)!
  svc.setSource('boom', [
    {
      name: 'boom',
      source: 'code:boom',
      version: '1',
      className: 'X',
      evaluate: () => {
        throw new Error('broken policy')
      }
    }
  ])
  t.same(await toolCallGate({ toolName: 'search', args: {} }), {
    admitted: false,
    policy: 'boom',
    reason: 'broken policy'
  })
  svc.removeSource('boom')
})

t.test('decisions are counted in /metrics by policy and decision', async (t) => {
  await toolCallGate({ toolName: 'delete_database', args: {} })
  const text = await fetch(`${tp.url}/metrics`).then((r) => r.text())
  t.match(text, /platform_governance_decisions_total\{policy="tool-rules",decision="deny"\} [1-9]/)
  t.match(text, /platform_governance_decisions_total\{policy="no-rm",decision="admit"\} [1-9]/)
})
