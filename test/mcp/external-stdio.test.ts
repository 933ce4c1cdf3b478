import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installAreas, loadConfig } from '../../runtime/areas.js'
import { getMcp } from '../../runtime/mcp/index.js'
import type { InvokeContext } from '../../runtime/mcp/entries.js'
import { governanceOf } from '../../runtime/governance/key.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { postTurn } from '../ai/agent-clients.js'
import { serverStatus, untilServer } from './external-helpers.js'

// An MCP server over stdio (the official SDK, run with node) whose tools the demo agent is given
// through `platform.ai.agent-tools`, called by the fake OpenAI-compatible model.
const REPO = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURE = fileURLToPath(new URL('./fixtures/external-stdio-server.mjs', import.meta.url))
const PATH = '/platform/agent/demo'
const dir = mkdtempSync(join(tmpdir(), 'mcp-external-stdio-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const rules = join(dir, 'rules.yaml')
writeFileSync(
  rules,
  `version: "1"
name: disk-rules
rules:
  - name: no-wipe
    condition: {field: tool_name, operator: eq, value: tw.wipe}
    action: deny
    priority: 10
    message: the disk stays
defaults:
  action: allow
`
)

const model = await new OpenAiServer().start()
t.teardown(() => model.close())
const tp = await startTestPlatform(
  {
    'platform.plugins.dirs': [join(REPO, 'plugins')],
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    'platform.ai.governance.policy-files': [rules],
    'platform.mcp.servers': {
      tw: { command: process.execPath, args: [FIXTURE], tools: ['echo', 'pid', 'hang', 'wipe', 'grow', 'late'] }
    },
    'platform.ai.agent-tools': { demo: ['tw.echo', 'tw.wipe', 'tw.late'] }
  },
  { install: installAreas }
)
t.teardown(tp.close)
const mcp = getMcp(tp.platform)!

/** The model: the scripted tool calls on a user message, then `done` once the results are back. */
function script(calls: { name: string; args: unknown }[]): void {
  model.chat = (body: any) => {
    if (body.messages.at(-1).role === 'tool')
      return { stream: sseEvents([deltaChunk({ content: 'done' }, 'stop'), usageChunk(4, 2)]) }
    return {
      stream: sseEvents([
        deltaChunk({
          tool_calls: calls.map((c, i) => ({
            index: i,
            id: `call_${i}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args) }
          }))
        }),
        deltaChunk({}, 'tool_calls'),
        usageChunk(10, 5)
      ])
    }
  }
}
const offered = (): string[] =>
  (model.on('/chat/completions')[0]?.tools ?? []).map((x: any) => x.function.name as string).sort()
const toolResults = (): string[] =>
  model
    .on('/chat/completions')[1]
    .messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content as string)

/** Calls a tool of the server as the platform does, without a turn around it. */
async function call(name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const tool = mcp.registry.externalTool(name)
  if (tool === undefined) throw new Error(`no tool ${name}`)
  const ctx: InvokeContext = { signal: new AbortController().signal, progress: () => {}, clientCapabilities: {} }
  return await tool.invoke(args, ctx)
}
const text = (r: unknown): string => (r as { content: { text: string }[] }).content[0]!.text

t.test('an agent’s turn calls the server’s tool and the result reaches the model', async (t) => {
  // OpenAI refuses a dot in a function name: the model is offered and calls stand-ins
  script([
    { name: 'tw_echo', args: { text: 'hello' } },
    { name: 'tw_wipe', args: {} }
  ])
  model.reset()
  const { status, frames } = await postTurn(tp.url, PATH, 'echo hello')
  t.equal(status, 200)
  t.match(offered(), ['platform_fact', 'topics', 'tw_echo', 'tw_wipe'], 'the listed tools, not tw.secret')
  const second = model.on('/chat/completions')[1]
  const sent = [
    ...second.tools.map((x: any) => x.function.name as string),
    ...second.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.function.name as string))
  ]
  t.same(
    sent.filter((n) => !/^[a-zA-Z0-9_-]{1,64}$/.test(n)),
    [],
    'every name the model is sent, its own calls in the history included, is one OpenAI accepts'
  )
  t.match(
    frames.filter((f) => String(f.event).startsWith('tool-')).map((f) => ({ event: f.event, ...f.data })),
    [
      { event: 'tool-start', toolName: 'tw.echo' },
      { event: 'tool-result', toolName: 'tw.echo', result: 'echo: hello' },
      { event: 'tool-start', toolName: 'tw.wipe' },
      { event: 'tool-error', toolName: 'tw.wipe', error: /denied by policy disk-rules: the disk stays/ }
    ]
  )
  t.match(toolResults(), ['echo: hello', /^error: tool call denied by policy disk-rules/], 'the model saw both')
  const decisions = governanceOf(tp.platform)!.decisionLog.page(100)!.entries
  t.ok(
    decisions.some((d) => d.decision === 'deny' && JSON.stringify(d.context_snapshot).includes('tw.wipe')),
    'the denial is in the decision log'
  )
  const served = (await (await fetch(tp.url + '/api/admin/mcp/tools')).json()) as { name: string }[]
  t.notOk(
    served.some((x) => x.name.startsWith('tw.')),
    'without expose the tools are not on /platform/mcp'
  )
  t.equal(mcp.registry.externalTool('tw.secret'), undefined, 'a tool off the allow-list is not callable')
  t.match(await serverStatus(tp.url, 'tw'), { state: 'connected', expose: false, tools: [{ name: 'tw.echo' }] })
  t.match(
    tp.logs.find((l) => String(l.msg).includes('platform.mcp.servers.tw.tools lists tools the server does not serve')),
    { level: 40, missing: ['late'] },
    'an allow-listed name the server does not serve is warned about'
  )
})

t.test('the server killed mid-call: an error naming it, then a new child', async (t) => {
  const pid = Number(text(await call('tw.pid')))
  const pending = call('tw.hang')
  // stdio is ordered: once pid answered again, the server has read the hanging call
  t.equal(Number(text(await call('tw.pid'))), pid)
  process.kill(pid, 'SIGKILL')
  await t.rejects(pending, /MCP server 'tw' is unavailable/)
  await t.rejects(call('tw.echo', { text: 'x' }), /MCP server 'tw'/, 'a call while it is down names it')

  await untilServer(tp.url, 'tw', (s) => s.state === 'connected', 'reconnection')
  t.equal(text(await call('tw.echo', { text: 'again' })), 'echo: again')
  t.not(Number(text(await call('tw.pid'))), pid, 'a new child process')
})

t.test('tools/list_changed refreshes the tools; a name already served is refused', async (t) => {
  t.teardown(mcp.registerTool({ name: 'tw.pid', description: 'ours', handler: () => 'ours' }))
  t.equal(text(await call('tw.grow')), 'grown')
  const s = await untilServer(tp.url, 'tw', (x) => x.tools.some((y) => y.name === 'tw.late'), 'the late tool appearing')
  t.same(s.refused, ["tool 'tw.pid' (already served by a registration in code)"])
  t.equal(text(await call('tw.late')), 'late answer')
  script([{ name: 'tw_late', args: {} }])
  model.reset()
  await postTurn(tp.url, PATH, 'late')
  t.ok(offered().includes('tw_late'), 'the next turn offers it')
  t.same(toolResults(), ['late answer'])
})

t.test('a server down at start: the platform starts, ready and degraded; timeout-ms bounds a call', async (t) => {
  const p = await startTestPlatform(
    {
      'platform.mcp.servers': {
        gone: { url: 'http://127.0.0.1:1/mcp' },
        slow: { command: process.execPath, args: [FIXTURE], tools: ['hang', 'echo'], 'timeout-ms': 200 }
      }
    },
    { install: installAreas }
  )
  t.teardown(p.close)
  const ready = await fetch(p.url + '/readyz')
  t.equal(ready.status, 200)
  t.match(await ready.json(), { status: 'DEGRADED', checks: { 'mcp-servers': 'DEGRADED' } })
  t.match(await serverStatus(p.url, 'gone'), { state: 'down', error: /./, tools: [] })

  const ctx: InvokeContext = { signal: new AbortController().signal, progress: () => {}, clientCapabilities: {} }
  const registry = getMcp(p.platform)!.registry
  await t.rejects(
    registry.externalTool('slow.hang')!.invoke({}, ctx),
    /MCP server 'slow' did not answer tool 'hang' within 200 ms/
  )
  t.match(
    await registry.externalTool('slow.echo')!.invoke({ text: 'still here' }, ctx),
    { content: [{ text: 'echo: still here' }] },
    'a timed-out call leaves the connection up'
  )
})

t.test('configuration mistakes stop start-up with a message naming the fix', async (t) => {
  const cwd = dir
  t.throws(
    () =>
      loadConfig({
        env: {},
        cwd,
        overrides: { 'platform.mcp.servers': { gh: { url: 'http://x/mcp', token: 'abc' } } }
      }),
    /platform\.mcp\.servers' at gh\.token must not be set: .*MCP_SERVER_<NAME>_TOKEN/
  )
  t.throws(
    () => loadConfig({ env: {}, cwd, overrides: { 'platform.mcp.servers': { gh: { comand: 'x' } } } }),
    /unknown key 'comand' \(did you mean 'command'\?\)/
  )
  for (const [servers, message] of [
    [{ Bad_Name: { command: 'x' } }, /platform\.mcp\.servers\.Bad_Name: a server name is/],
    [{ both: { command: 'x', url: 'http://127.0.0.1:1/mcp' } }, /set exactly one of url .* and command/],
    [{ neither: { tools: ['a'] } }, /set exactly one of url .* and command/],
    [{ web: { url: 'http://127.0.0.1:1/mcp', args: ['-v'] } }, /args and env belong to a stdio server/]
  ] as const) {
    await t.rejects(startTestPlatform({ 'platform.mcp.servers': servers }, { install: installAreas }), {
      message,
      def: { operator: true }
    })
  }
})
