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
import { agentSocket, isTerminal, postTurn } from './agent-clients.js'

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

// regression: client metadata went to the policies verbatim, so any caller could claim
// {"metadata": {"roles": ["analyst"]}} and pass an authorization policy
t.test('roles reach the authorization policy from the credentials, never from client metadata', async (t) => {
  const rolesFile = join(dir, 'roles.yaml')
  writeFileSync(
    rolesFile,
    `version: "3"
policies:
  - name: analysts-only
    type: authorization
    config: {required-roles: [analyst]}
`
  )
  const analyst = 'analyst-token-0123456789'
  const plain = 'plain-token-0123456789ab'
  const p = await startTestPlatform(
    {
      'platform.plugins.dirs': [join(REPO, 'plugins')],
      'platform.ai.governance.policy-files': [rolesFile],
      'platform.auth.tokens': [
        { token: analyst, principal: 'ann', roles: ['analyst'] },
        { token: plain, principal: 'pat', roles: [] }
      ]
    },
    { install: installAreas }
  )
  t.teardown(p.close)
  const claim = JSON.stringify({ message: 'hello', metadata: { roles: ['analyst'] } })
  for (const [who, headers] of [
    ['anonymous', {}],
    ['a principal without the role', { authorization: `Bearer ${plain}` }]
  ] as const) {
    const s = await agentSocket(p.url, PATH, headers)
    t.match((await s.turn(claim)).at(-1), { type: 'error', data: /denied by policy analysts-only/ }, who)
    s.ws.close()
    const post = await postTurn(p.url, PATH, claim, headers)
    t.match(post.frames.at(-1), { type: 'error', data: /denied by policy analysts-only/ }, `${who}, one-shot`)
  }
  const s = await agentSocket(p.url, PATH, { authorization: `Bearer ${analyst}` })
  t.teardown(() => s.ws.close())
  t.match((await s.turn('hello')).at(-1), { event: 'complete' }, 'the role its token carries admits it')
  const post = await postTurn(p.url, PATH, 'hello', { authorization: `Bearer ${analyst}` })
  t.match(post.frames.at(-1), { event: 'complete' })
})

t.test('a tool call inside a turn counts against the same subject as the turn', async (t) => {
  const one = join(dir, 'one-slot.yaml')
  writeFileSync(
    one,
    'version: "3"\npolicies:\n  - name: one-slot\n    type: concurrency-limit\n    config: {max-concurrent: 1}\n'
  )
  const p = await startTestPlatform(
    { 'platform.plugins.dirs': [join(REPO, 'plugins')], 'platform.ai.governance.policy-files': [one] },
    { install: installAreas }
  )
  t.teardown(p.close)
  const s = await agentSocket(p.url, PATH)
  t.teardown(() => s.ws.close())
  const frames = await s.turn('What is a sandbox?')
  t.match(
    frames.find((f) => f.event === 'tool-error'),
    {
      data: { toolName: 'platform_fact', error: /denied by policy one-slot: concurrency limit/ }
    }
  )
  t.match(frames.at(-1), { event: 'complete' }, 'the model still answers, from the error')
  t.match((await s.turn('again')).at(-1), { event: 'complete' }, 'and the slot is free for the next turn')
})
