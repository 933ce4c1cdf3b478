// The gate starts no span while no tracing SDK is registered (they would all be no-ops), and
// picks up a tracer provider registered after the platform started from the next evaluation on.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { recordSpans } from '../helpers/span-recorder.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const dir = mkdtempSync(join(tmpdir(), 'gov-gate-tracing-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})
const file = join(dir, 'policies.yaml')
writeFileSync(
  file,
  `version: "1"
policies:
  - {name: no-secrets, type: deny-list, config: {phrases: [secret]}}
  - {name: short, type: message-length, config: {max-chars: 4000}}
`
)

t.test('a tracer provider registered after start sees every later evaluation as a span', async (t) => {
  const tp = await startTestPlatform(
    { 'platform.ai.governance.policy-files': [file] },
    { install: (p: Platform) => installAreas(p, [scopeArea, governanceArea]) }
  )
  t.teardown(tp.close)
  const gov = governanceOf(tp.platform)!
  t.equal((await gov.gate.admit('test', aiRequest({ message: 'hello' }))).admitted, true)
  t.equal(gov.decisionLog.recent(10).length, 2, 'recorded without tracing')
  const spans = recordSpans()
  await gov.gate.admit('test', aiRequest({ message: 'hello' }))
  await gov.gate.admit('test', aiRequest({ message: 'the secret' }))
  t.same(
    spans.map((s) => [s.name, s.attributes['policy.name'], s.attributes['policy.decision'], s.ended]),
    [
      ['governance.policy.evaluate', 'no-secrets', 'admit', true],
      ['governance.policy.evaluate', 'short', 'admit', true],
      ['governance.policy.evaluate', 'no-secrets', 'deny', true]
    ]
  )
  t.equal(gov.decisionLog.recent(10).length, 5)
})
