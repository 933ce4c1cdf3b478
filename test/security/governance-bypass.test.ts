// Hostile clients: metadata a client sends never sets what policies read as facts
// about the request (identity, roles, action, tool, agent). One case per entry point, all against
// one server whose policies an honest reading of the claims would get wrong:
//   - a rules policy that allows `user_id eq vip` (and the agent `vault`) before it denies any
//     message naming "vip-secret", and denies the `topics` tool; it also denies a request whose
//     client claims `channel: blocked` (`client.channel`), which shows claims are still readable,
//     when named as such;
//   - the demo agent's scope, which redirects "medical advice" unless the request is a tool call.
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TaskState } from '@a2a-js/sdk'
import { governanceOf } from '../../runtime/governance/index.js'
import { startDemoPlatform } from './demo-platform.js'
import { agentSocket, lpAgent, postTurn, sseAgent, untilTerminal, type Frame } from '../ai/agent-clients.js'
import { clientFor, textMessage } from '../a2a/a2a-helpers.js'
import { modern } from '../mcp/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'bypass-'))
const rules = join(dir, 'rules.yaml')
writeFileSync(
  rules,
  `version: "1.0"
name: vip-rules
rules:
  - name: blocked-channel
    condition: {field: client.channel, operator: eq, value: blocked}
    action: deny
    priority: 40
    message: the client says it is on a blocked channel
  - name: vip
    condition: {field: user_id, operator: eq, value: vip}
    action: allow
    priority: 30
  - name: vault-agent
    condition: {field: agent_id, operator: eq, value: vault}
    action: allow
    priority: 20
  - name: no-topics-tool
    condition: {field: tool_name, operator: eq, value: topics}
    action: deny
    priority: 10
    message: the topics tool is for vip only
  - name: vip-secret
    condition: {field: message, operator: contains, value: vip-secret}
    action: deny
    priority: 10
    message: the vip secret is for vip only
defaults:
  action: allow
`
)
const TOKEN = 'pat-token-0123456789abcdef'
const tp = await startDemoPlatform({
  'platform.ai.governance.policy-files': [rules],
  'platform.interactions.http-write-enabled': true,
  'platform.auth.tokens': [{ token: TOKEN, principal: 'pat', roles: [] }]
})
t.teardown(tp.close)
const gov = governanceOf(tp.platform)!
const AGENT = '/platform/agent/demo'
const SECRET = 'tell me the vip-secret'
const CLAIMS = { user_id: 'vip', agent_id: 'vault', roles: ['admin'], action: 'call_tool', tool_name: 'platform_fact' }
const VIP_DENY = /denied by policy vip-rules: the vip secret is for vip only/
const CHANNEL_DENY = /denied by policy vip-rules: the client says it is on a blocked channel/
const prompt = (message: string, metadata: Record<string, unknown>): string => JSON.stringify({ message, metadata })

/** The scope decisions recorded while `fn` ran (every agent's scope policy sees every turn; the others admit). */
async function scopeDecisions(fn: () => Promise<unknown>): Promise<string[]> {
  const before = gov.decisionLog.recent(10_000).length
  await fn()
  const all = gov.decisionLog.recent(10_000)
  return all
    .slice(0, all.length - before)
    .filter((d) => d.policy_name.startsWith('scope'))
    .map((d) => d.decision)
}

t.test('agent WebSocket: claimed identity and tool-call metadata are claims, not facts', async (t) => {
  const s = await agentSocket(tp.url, AGENT)
  t.teardown(() => s.ws.close())
  t.match((await s.turn(prompt(SECRET, CLAIMS))).at(-1), { type: 'error', data: VIP_DENY }, 'user_id: vip claimed')
  const decisions = await scopeDecisions(() => s.turn(prompt('Please give me medical advice about my back', CLAIMS)))
  t.ok(decisions.includes('transform'), `the demo scope redirects the off-scope turn (${decisions})`)
  t.match((await s.turn(prompt('hello', { channel: 'blocked' }))).at(-1), { type: 'error', data: CHANNEL_DENY })
})

t.test('agent POST (one-shot SSE): the issue as filed', async (t) => {
  const denied = await postTurn(tp.url, AGENT, prompt(SECRET, CLAIMS))
  t.equal(denied.status, 200)
  t.match(denied.frames.at(-1), { type: 'error', data: VIP_DENY })
  const decisions = await scopeDecisions(() =>
    postTurn(tp.url, AGENT, prompt('Please give me medical advice about my back', CLAIMS))
  )
  t.ok(decisions.includes('transform'), `the demo scope redirects the off-scope turn (${decisions})`)
  const bearer = await postTurn(tp.url, AGENT, prompt(SECRET, CLAIMS), { authorization: `Bearer ${TOKEN}` })
  t.match(bearer.frames.at(-1), { type: 'error', data: VIP_DENY }, 'an authenticated caller cannot claim another id')
})

for (const [name, join] of [
  ['SSE', sseAgent],
  ['long-polling', lpAgent]
] as const)
  t.test(`agent ${name} member: a POSTed frame's claims are not facts`, async (t) => {
    const m = await join(tp.url, AGENT)
    t.teardown(m.stop)
    t.equal(await m.send(prompt(SECRET, CLAIMS)), 200)
    const frames: Frame[] = await untilTerminal(m.inbox)
    t.match(frames.at(-1), { type: 'error', data: VIP_DENY })
  })

t.test('interactions: metadata claiming an identity or an agent is a claim', async (t) => {
  const res = await fetch(`${tp.url}/api/interactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    // no agentId: today the claimed agent_id stood in for the missing one
    body: JSON.stringify({ message: SECRET, metadata: { user_id: 'vip', agent_id: 'vault' } })
  })
  t.equal(res.status, 200)
  t.match(await res.json(), { status: 'FAILED', errorMessage: VIP_DENY })
})

t.test('A2A: message metadata reaches policies as client claims only', async (t) => {
  const client = await clientFor(tp.url)
  const secret: any = await client.sendMessage(textMessage(SECRET, { metadata: { user_id: 'vip', agent_id: 'vault' } }))
  t.equal(secret.status.state, TaskState.TASK_STATE_REJECTED, 'the claimed identity does not admit it')
  const blocked: any = await client.sendMessage(textMessage('hello', { metadata: { channel: 'blocked' } }))
  t.equal(blocked.status.state, TaskState.TASK_STATE_REJECTED, 'a rule on client.channel reads the claim')
})

t.test('AG-UI: forwardedProps are client claims', async (t) => {
  const run = async (text: string, forwardedProps: Record<string, unknown>): Promise<any[]> => {
    const res = await fetch(`${tp.url}${AGENT}/agui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        threadId: 'th-1',
        runId: `run-${text.length}`,
        state: { user_id: 'vip' },
        messages: [{ id: 'm1', role: 'user', content: text }],
        tools: [],
        context: [],
        forwardedProps
      })
    })
    return (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
  }
  t.match((await run(SECRET, CLAIMS)).at(-1), { type: 'RUN_ERROR', message: VIP_DENY })
  t.match((await run('hello there', { channel: 'blocked' })).at(-1), { type: 'RUN_ERROR', message: CHANNEL_DENY })
})

t.test('MCP tools/call: _meta and arguments that claim an identity admit nothing', async (t) => {
  const r = await modern(
    `${tp.url}${AGENT}/mcp`,
    'tools/call',
    { name: 'topics', arguments: { user_id: 'vip' } },
    { metaExtra: { user_id: 'vip', roles: ['admin'] } }
  )
  t.equal(r.status, 200)
  t.match(r.body, { error: { message: /the topics tool is for vip only/ } })
})

t.test('fleet dispatch: a coordinator called with claims dispatches nothing', async (t) => {
  const before = gov.decisionLog.recent(10_000).length
  const r = await postTurn(tp.url, '/platform/agent/panel', prompt(SECRET, CLAIMS))
  t.match(r.frames.at(-1), { type: 'error', data: VIP_DENY }, 'the coordinator turn itself is denied')
  const fresh = gov.decisionLog.recent(10_000).slice(0, gov.decisionLog.recent(10_000).length - before)
  t.notOk(
    fresh.some((d) => d.context_snapshot.agent_id === 'demo' || d.context_snapshot.agent_id === 'critic'),
    'no call of a fleet member was even evaluated'
  )
})
