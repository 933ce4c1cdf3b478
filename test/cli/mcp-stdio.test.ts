import t from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { Client as ClientV2 } from '@modelcontextprotocol/client'
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio'
import { startExtras } from '../mcp/extras-helpers.js'
import { getClientTools } from '../../runtime/mcp/client-tools.js'

const BIN = join(import.meta.dirname, '../../bin/platform.js')
const args = (url: string, ...extra: string[]) => ['--no-node-snapshot', BIN, 'mcp-stdio', '--url', url, ...extra]

t.test('platform mcp-stdio bridges the official stdio clients to the HTTP endpoint', async (t) => {
  const m = await startExtras()
  t.teardown(m.tp.close)
  m.mcp.registerTool({
    name: 'add',
    description: 'Adds',
    params: [
      { name: 'a', type: 'integer' },
      { name: 'b', type: 'integer' }
    ],
    handler: (x) => (x.a as number) + (x.b as number)
  })

  await t.test(
    'SDK v1 (session dialect): initialize, tools, list_changed from the GET stream, DELETE at exit',
    async (t) => {
      const client = new ClientV1({ name: 'stdio-v1', version: '1.0.0' })
      const transport = new StdioV1({ command: process.execPath, args: args(m.url), stderr: 'pipe' })
      await client.connect(transport)
      t.equal(client.getServerVersion()?.name, 'agent-platform')
      const tools = await client.listTools()
      t.ok(tools.tools.some((x) => x.name === 'add'))
      const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } })
      t.same(r.content, [{ type: 'text', text: '42' }])
      const sessions = [...m.mcp.core.sessions.liveSessions()]
      t.equal(sessions.length, 1, 'one session behind the bridge')
      const changed = new Promise<void>((resolve) => {
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          resolve()
        })
      })
      // the GET stream opens after notifications/initialized: wait for it, then change the tools
      for (let i = 0; i < 100 && sessions[0]!.channel === undefined; i++)
        await new Promise((resolve) => setTimeout(resolve, 20))
      t.ok(sessions[0]!.channel, 'the bridge opened the GET stream')
      const bridge = getClientTools(m.tp.platform)!
      client.setRequestHandler(
        (await import('@modelcontextprotocol/sdk/types.js')).CallToolRequestSchema as any,
        async (req: any) => ({ content: [{ type: 'text', text: `client got ${String(req.params.name)}` }] })
      )
      t.same(
        await bridge.callClientTool(sessions[0]!.id, 'local_tool', {}),
        { content: [{ type: 'text', text: 'client got local_tool' }] },
        'server-to-client request relayed and answered through the bridge'
      )
      const remove = m.mcp.registerTool({ name: 'later', description: 'Added later', handler: () => 'x' })
      await changed
      t.pass('notifications/tools/list_changed relayed')
      remove()
      await client.close()
      for (let i = 0; i < 100 && m.mcp.core.sessions.get(sessions[0]!.id) !== undefined; i++)
        await new Promise((resolve) => setTimeout(resolve, 20))
      t.equal(m.mcp.core.sessions.get(sessions[0]!.id), undefined, 'session deleted when stdin closed')
    }
  )

  await t.test('SDK v2 with version negotiation (stateless 2026-07-28 dialect)', async (t) => {
    const client = new ClientV2({ name: 'stdio-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } } as any)
    const transport = new StdioV2({ command: process.execPath, args: args(m.url), stderr: 'pipe' })
    const before = [...m.mcp.core.sessions.liveSessions()].length
    await client.connect(transport)
    const tools = await client.listTools()
    t.ok(tools.tools.some((x: any) => x.name === 'add'))
    const r = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })
    t.same((r as any).content, [{ type: 'text', text: '3' }])
    t.equal((client as any).getNegotiatedProtocolVersion(), '2026-07-28')
    t.equal([...m.mcp.core.sessions.liveSessions()].length, before, 'no session: stateless')
    await client.close()
  })
})

t.test('bridge errors: bad flags, unreachable server, malformed lines', async (t) => {
  const run = async (argv: string[], input: string): Promise<{ code: number | null; out: string; err: string }> =>
    await new Promise((resolve) => {
      const p = spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'] })
      let out = ''
      let err = ''
      p.stdout.on('data', (d) => {
        out += String(d)
      })
      p.stderr.on('data', (d) => {
        err += String(d)
      })
      p.on('close', (code) => {
        resolve({ code, out, err })
      })
      p.stdin.end(input)
    })
  const noUrl = await run(['--no-node-snapshot', BIN, 'mcp-stdio'], '')
  t.equal(noUrl.code, 2)
  t.match(noUrl.err, /mcp-stdio needs --url/)
  t.equal(noUrl.out, '', 'nothing on stdout, which belongs to the protocol')
  const down = await run(args('http://127.0.0.1:9/mcp'), '{"jsonrpc":"2.0","id":7,"method":"tools/list"}\nnot json\n')
  t.equal(down.code, 0)
  const lines = down.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  t.same(
    lines.map((l) => [l.id, l.error.code]).sort(),
    [
      [7, -32000],
      [null, -32700]
    ].sort()
  )
  t.match(lines.find((l) => l.id === 7).error.message, /cannot reach http:\/\/127\.0\.0\.1:9\/mcp/)
})
