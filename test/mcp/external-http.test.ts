import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { installAreas } from '../../runtime/areas.js'
import { governanceOf } from '../../runtime/governance/key.js'
import { startTestPlatform } from '../helpers/platform.js'
import { resultProblem } from '../../runtime/mcp/forwarded-result.js'
import { NotesServer, serverStatus, startRawServer, startSseOnlyServer, untilServer } from './external-helpers.js'

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
const raw = await startRawServer()
t.teardown(raw.close)
process.env.MCP_SERVER_NOTES_TOKEN = 'notes-secret'
t.teardown(() => {
  delete process.env.MCP_SERVER_NOTES_TOKEN
})
const tp = await startTestPlatform(
  {
    'platform.ai.governance.policy-files': [rules],
    'platform.mcp.servers': {
      notes: { url: notes.url, expose: true, tools: ['read', 'delete', 'hang', 'count'] },
      raw: { url: raw.url, expose: true }
    }
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
    ['notes.read', 'notes.delete', 'notes.hang', 'notes.count']
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

const textOf = (r: unknown): string => (r as { content: { text: string }[] }).content[0]!.text

t.test(
  'a forwarded result is checked once: what the platform cannot use is an isError result naming the server',
  async (t) => {
    const client = await gatewayClient()
    t.teardown(() => client.close())
    const broken = await client.callTool({ name: 'raw.broken', arguments: {} })
    t.equal(broken.isError, true)
    t.match(textOf(broken), /MCP server 'raw' answered with an invalid tool result: content\[0\]\.text is not a string/)
    t.match(
      await serverStatus(tp.url, 'raw'),
      { state: 'connected' },
      'an answer, even a wrong one, is no lost connection'
    )
    t.equal(raw.initializes(), 1, 'so nothing reconnected')

    const typed = await client.callTool({ name: 'raw.typed', arguments: {} })
    t.equal(typed.isError, true, 'a tool with an output schema still has its structured content checked')
    t.match(textOf(typed), /MCP server 'raw' refused the call: .*output schema/)
    const refused = await client.callTool({ name: 'raw.refuse', arguments: {} })
    t.equal(refused.isError, true, 'a JSON-RPC error of the server')
    t.match(textOf(refused), /MCP server 'raw' refused the call: .*no such thing here/)
    const plain = await client.callTool({ name: 'raw.plain', arguments: {} })
    t.same(plain.content, [{ type: 'text', text: 'plain answer' }])
    t.equal(plain.isError, false)
  }
)

t.test('what the result check refuses and what it lets through', async (t) => {
  const refused: [unknown, RegExp][] = [
    [null, /not an object/],
    [[], /not an object/],
    [{ content: 'text' }, /content is not a list/],
    [{ content: [7] }, /content\[0\] is not an object/],
    [{ content: [{ type: 'video' }] }, /unknown type "video"/],
    [{ content: [{ type: 'toString' }] }, /unknown type "toString"/],
    [{ content: [{ type: 'image', data: 'AA==' }] }, /content\[0\]\.mimeType is not a string/],
    [{ content: [{ type: 'resource', resource: { uri: 'x:/a' } }] }, /needs a uri and a text or blob/],
    [{ content: [], isError: 'yes' }, /isError is not a boolean/],
    [{ content: [], structuredContent: [1] }, /structuredContent is not an object/],
    [{ content: [], _meta: 'm' }, /_meta is not an object/]
  ]
  for (const [v, why] of refused) t.match(resultProblem(v), why, JSON.stringify(v))
  const good = [
    {},
    { content: [{ type: 'text', text: 'a', annotations: { priority: 1 } }], isError: false },
    { content: [{ type: 'resource', resource: { uri: 'x:/a', blob: 'AA==' } }], structuredContent: { a: 1 } },
    {
      content: [
        { type: 'resource_link', uri: 'x:/a', name: 'a' },
        { type: 'audio', data: 'AA==', mimeType: 'audio/wav' }
      ]
    }
  ]
  for (const v of good) t.equal(resultProblem(v), undefined, JSON.stringify(v))
})

t.test('progress reaches a caller who asked for it; a call without a progress token sends none on', async (t) => {
  const client = await gatewayClient()
  t.teardown(() => client.close())
  await client.callTool({ name: 'notes.read', arguments: { id: '3' } })
  t.equal((notes.metas.at(-1) as { progressToken?: unknown } | undefined)?.progressToken, undefined)
  const seen: unknown[] = []
  const r = await client.callTool({ name: 'notes.count', arguments: {} }, undefined, {
    onprogress: (p) => seen.push(p)
  })
  t.same(r.content, [{ type: 'text', text: 'counted' }])
  t.not((notes.metas.at(-1) as { progressToken?: unknown }).progressToken, undefined, 'the call carried a token')
  t.match(seen, [
    { progress: 1, total: 2 },
    { progress: 2, total: 2 }
  ])
})

t.test('a call its caller cancels is cancelled on the server too', async (t) => {
  const client = await gatewayClient()
  t.teardown(() => client.close())
  const entered = notes.hangEntered()
  const cancelled = notes.cancelArrived()
  const ac = new AbortController()
  const pending = client.callTool({ name: 'notes.hang', arguments: {} }, undefined, { signal: ac.signal })
  await entered
  ac.abort('enough')
  await t.rejects(pending)
  t.equal(typeof (await cancelled), 'number', 'notifications/cancelled reached the server, naming the request')
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
