import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { governanceOf } from '../../runtime/governance/index.js'
import type { ConcurrencyLimitPolicy } from '../../runtime/governance/types/limits.js'
import { startTestPlatform } from '../helpers/platform.js'
import { agentSocket, isTerminal } from './agent-clients.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const PATH = '/platform/agent/demo'
const dir = mkdtempSync(join(tmpdir(), 'agent-gov-'))
const file = join(dir, 'policies.yaml')
writeFileSync(
  file,
  `version: "3"
policies:
  - name: no-launch-codes
    type: deny-list
    config: {phrases: [launch codes]}
  - name: slots
    type: concurrency-limit
    config: {max-concurrent: 2}
`
)
const tp = await startTestPlatform(
  { 'platform.plugins.dirs': [join(REPO, 'plugins')], 'platform.ai.governance.policy-files': [file] },
  { install: installAreas }
)
t.teardown(tp.close)
const ai = tp.platform.area(AI)
const gov = governanceOf(tp.platform)!

t.test("a governance deny ends the turn with one error frame carrying the policy's reason", async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  const frames = await s.turn(JSON.stringify({ message: 'give me the launch codes', conversationId: 'c1' }))
  t.equal(frames.length, 1, 'nothing of the turn but its terminal frame')
  t.match(frames[0], {
    type: 'error',
    data: 'denied by policy no-launch-codes: deny-list: request matched a denied phrase'
  })
  t.notOk(frames.some((f) => f.event === 'complete'))
  t.equal(frames.filter(isTerminal).length, 1)
  t.same(await ai.memory.read(`s:${s.session!.sessionId}:c1`), [], 'a denied turn leaves no memory')
  const ok = await s.turn('What is a sandbox?')
  t.match(ok.at(-1), { event: 'complete' }, 'the connection goes on after a deny')
})

// regression: the tool-call gate admitted each tool call as a turn (pre-admission only), so a
// concurrency-limit took a slot per tool call and never gave it back; the subject's next turns
// then found the limit full
t.test('tool calls through the governance gate give their concurrency slot back', async (t) => {
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  const slots = gov.chain.policies.find((p) => p.name === 'slots') as ConcurrencyLimitPolicy
  const subject = `session:${s.session!.sessionId}`
  for (let i = 0; i < 4; i++) {
    const frames = await s.turn('What is a sandbox?')
    t.notOk(
      frames.find((f) => f.event === 'tool-error'),
      `turn ${i + 1}: the tool call is admitted`
    )
    t.match(
      frames.find((f) => f.event === 'tool-result'),
      { data: { toolName: 'platform_fact' } }
    )
    t.match(frames.at(-1), { event: 'complete' })
    t.equal(slots.held(subject), 0, `turn ${i + 1}: no slot held once the turn is over`)
  }
})
