// Hostile clients: `POST /api/admin/governance/check` is a question, not a free
// denial. Seven anonymous checks used to spend the shared anonymous rate-limit quota, so the
// anonymous MCP `tools/call` that followed was denied for the whole window.
import t, { type Test } from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { governanceOf } from '../../runtime/governance/index.js'
import type { ConcurrencyLimitPolicy } from '../../runtime/governance/types/limits.js'
import { startDemoPlatform } from './demo-platform.js'
import { modern } from '../mcp/helpers.js'

const file = join(mkdtempSync(join(tmpdir(), 'check-dry-run-')), 'policies.yaml')
writeFileSync(
  file,
  `version: "3"
policies:
  - name: three-a-minute
    type: rate-limit
    config: {limit: 3, window-seconds: 60}
  - name: one-at-a-time
    type: concurrency-limit
    config: {max-concurrent: 1}
`
)
const tp = await startDemoPlatform({ 'platform.ai.governance.policy-files': [file] })
t.teardown(tp.close)
const gov = governanceOf(tp.platform)!

const check = async (t: Test): Promise<any> => {
  const res = await fetch(`${tp.url}/api/admin/governance/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: 'demo', action: 'call_tool', context: { tool_name: 'platform_fact' } })
  })
  t.equal(res.status, 200)
  return await res.json()
}
const toolCall = () =>
  modern(`${tp.url}/platform/agent/demo/mcp`, 'tools/call', { name: 'platform_fact', arguments: { topic: 'mcp' } })

t.test('anonymous checks spend no quota and take no slot; the decision says it was a dry run', async (t) => {
  const slots = gov.chain.policies.find((p) => p.name === 'one-at-a-time') as ConcurrencyLimitPolicy
  for (let i = 0; i < 7; i++) {
    const c = await check(t)
    t.match(c, { allowed: true, decision: 'allow', dry_run: true }, `check ${i + 1}`)
    t.equal(slots.held('anonymous'), 0, `check ${i + 1} holds no concurrency slot`)
  }
  for (let i = 0; i < 3; i++) {
    const r = await toolCall()
    t.equal(r.status, 200)
    t.notOk(r.body.error, `anonymous tools/call ${i + 1} is admitted after the checks`)
  }
  // the quota is now spent by real calls: a check says what a request would meet, and spends nothing
  t.match(await check(t), {
    allowed: false,
    reason: /rate-limited: anonymous exceeded 3 requests per 60s/,
    matched_policy: 'three-a-minute',
    dry_run: true
  })
  t.match((await toolCall()).body, { error: { message: /three-a-minute/ } }, 'and real calls stay limited')
})
