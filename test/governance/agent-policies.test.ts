import t from 'tap'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { installAreas } from '../../runtime/areas.js'
import { GOVERNANCE } from '../../runtime/governance/key.js'
import { startTestPlatform } from '../helpers/platform.js'

// An agent's scope governs that agent's turns only: the gate skips it on other agents' turns, so
// the decision log holds one scope verdict per turn, not one per bundled agent.
const REPO = fileURLToPath(new URL('../../', import.meta.url))

t.test("a turn of one agent logs no decision of another agent's scope", async (t) => {
  const tp = await startTestPlatform({ 'platform.plugins.dirs': [join(REPO, 'plugins')] }, { install: installAreas })
  t.teardown(tp.close)
  const log = tp.platform.area(GOVERNANCE).decisionLog
  const chain = tp.platform.area(GOVERNANCE).chain.policies.map((p) => p.name)
  t.ok(chain.includes('scope::demo') && chain.includes('scope::critic'), `several agents have scopes: ${chain}`)
  const scopeNames = () =>
    log
      .recent(10_000)
      .map((e) => e.policy_name)
      .filter((n) => n.startsWith('scope::'))
  const before = scopeNames().length
  const res = await fetch(`${tp.url}/platform/agent/demo`, { method: 'POST', body: 'How are plugins sandboxed?' })
  t.equal(res.status, 200)
  await res.text()
  await log.written()
  const all = scopeNames()
  t.ok(all.length > before, 'the turn was governed by its scope')
  t.same([...new Set(all)], ['scope::demo'], `only the demo agent's scope: ${all.join(' ')}`)
})
