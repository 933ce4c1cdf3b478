import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { installAreas } from '../../runtime/areas.js'
import { governanceOf } from '../../runtime/governance/key.js'
import { startTestPlatform } from '../helpers/platform.js'
import { NotesServer, serverStatus, startSseOnlyServer, untilServer } from './external-helpers.js'

// The gateway: a Streamable HTTP MCP server (the official SDK, on loopback) configured with
// `expose: true` is served on /platform/mcp under the platform's policies and decision log.
const dir = mkdtempSync(join(tmpdir(), 'mcp-external-http-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const rules = join(dir, 'rules.yaml')
writeFileSync(
  rules,
  `version: "1"
name: note-rules
rules:
  - name: keep-notes
    condition: {field: tool_name, operator: eq, value: notes.delete}
    action: deny
    priority: 10
    message: notes are kept
defaults:
  action: allow
`
)

const notes = await new NotesServer().start()
t.teardown(() => notes.stop())
process.env.MCP_SERVER_NOTES_TOKEN = 'notes-secret'
t.teardown(() => {
  delete process.env.MCP_SERVER_NOTES_TOKEN
})
const tp = await startTestPlatform(
  {
    'platform.ai.governance.policy-files': [rules],
    'platform.mcp.servers': { notes: { url: notes.url, expose: true, tools: ['read', 'delete', 'hang'] } }
  },
  { install: installAreas }
)
t.teardown(tp.close)

async function gatewayClient(): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(tp.url + '/platform/mcp')))
  return client
}

t.test('the official client lists and calls the server’s tools through /platform/mcp', async (t) => {
  const client = await gatewayClient()
  t.teardown(() => client.close())
  const names = (await client.listTools()).tools.map((x) => x.name)
  t.ok(names.includes('notes.read') && names.includes('notes.delete'), 'the allowed tools, prefixed')
  const r = await client.callTool({ name: 'notes.read', arguments: { id: '7' } })
  t.same(r.content, [{ type: 'text', text: 'note 7: buy milk' }])
  t.equal(r.isError, false)
  t.ok(
    notes.auth.every((a) => a === 'Bearer notes-secret'),
    'every request to the server carries the token from MCP_SERVER_NOTES_TOKEN'
  )

  const bad = await client.callTool({ name: 'notes.read', arguments: {} })
  t.equal(bad.isError, true, 'arguments are checked against the server’s schema before the call')

  const before = notes.calls
  await t.rejects(
    client.callTool({ name: 'notes.delete', arguments: {} }),
    /denied by policy 'note-rules': notes are kept/,
    'a policy denies the tool'
  )
  t.equal(notes.calls, before, 'nothing reached the server')
  const decisions = governanceOf(tp.platform)!.decisionLog.page(100)!.entries
  const about = (tool: string) => decisions.filter((d) => JSON.stringify(d.context_snapshot).includes(tool))
  t.ok(
    about('notes.read').some((d) => d.decision === 'admit'),
    'the admitted call is in the decision log'
  )
  t.ok(
    about('notes.delete').some((d) => d.decision === 'deny' && d.policy_name === 'note-rules'),
    'so is the denial'
  )
})

t.test('resources and prompts of an exposed server are served too', async (t) => {
  const client = await gatewayClient()
  t.teardown(() => client.close())
  const res = await client.readResource({ uri: 'notes://readme' })
  t.match(res.contents[0], { uri: 'notes://readme', text: 'the notes server' })
  const prompt = await client.getPrompt({ name: 'notes.summary', arguments: { topic: 'milk' } })
  t.match(JSON.stringify(prompt.messages), /summarise notes on milk/)
})

t.test('the admin lists the server with its tools, the MCP tools with their server', async (t) => {
  const s = await serverStatus(tp.url, 'notes')
  t.match(s, { name: 'notes', state: 'connected', expose: true, error: null, refused: [] })
  t.same(
    s!.tools.map((x) => x.name),
    ['notes.read', 'notes.delete', 'notes.hang']
  )
  const tools = (await (await fetch(tp.url + '/api/admin/mcp/tools')).json()) as { name: string; server?: string }[]
  t.match(
    tools.find((x) => x.name === 'notes.read'),
    { server: 'notes' }
  )
  const ready = await fetch(tp.url + '/readyz')
  t.equal(ready.status, 200)
  t.match(await ready.json(), { checks: { 'mcp-servers': 'UP' } })
})

t.test('a server killed mid-call: an isError result naming it, then recovery when it returns', async (t) => {
  const client = await gatewayClient()
  t.teardown(() => client.close())
  const entered = notes.hangEntered()
  const pending = client.callTool({ name: 'notes.hang', arguments: {} })
  await entered
  await notes.stop()
  const r = await pending
  t.equal(r.isError, true)
  t.match((r.content as { text: string }[])[0]!.text, /MCP server 'notes' is unavailable/)

  const down = await client.callTool({ name: 'notes.read', arguments: { id: '1' } })
  t.equal(down.isError, true, 'while it is down a call answers at once')
  t.match((down.content as { text: string }[])[0]!.text, /MCP server 'notes'/)
  const ready = await fetch(tp.url + '/readyz')
  t.equal(ready.status, 200, 'readiness holds')
  t.match(await ready.json(), { checks: { 'mcp-servers': 'DEGRADED' } })

  await notes.restart()
  await untilServer(tp.url, 'notes', (s) => s.state === 'connected', 'reconnection')
  const back = await client.callTool({ name: 'notes.read', arguments: { id: '2' } })
  t.same(back.content, [{ type: 'text', text: 'note 2: buy milk' }])
})

t.test('a server that speaks only HTTP+SSE is reached over SSE', async (t) => {
  const sse = await startSseOnlyServer()
  t.teardown(sse.close)
  const p = await startTestPlatform(
    { 'platform.mcp.servers': { old: { url: sse.url, expose: true } } },
    { install: installAreas }
  )
  t.teardown(p.close)
  t.match(await serverStatus(p.url, 'old'), { state: 'connected', tools: [{ name: 'old.ping' }] })
  const client = new Client({ name: 'gateway-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(p.url + '/platform/mcp')))
  t.teardown(() => client.close())
  const r = await client.callTool({ name: 'old.ping', arguments: {} })
  t.same(r.content, [{ type: 'text', text: 'pong over sse' }])
})
