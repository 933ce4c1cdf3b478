import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { definePlugin, tool, agent } from 'uws-agent-platform/sdk'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { getMcp, type McpServer } from '../../runtime/mcp/index.js'
import { mcpArea } from '../../runtime/mcp/install.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import type { Platform } from '../../runtime/platform.js'
import { TOOL_CALL_GATE, type ToolCallGate } from '../../runtime/contracts/index.js'

export const FIXTURE_DIR = join(import.meta.dirname, '../fixtures/plugins/conformance')
export const MODERN = '2026-07-28'

export function manifestOf(name: string, extra: Partial<Manifest> = {}): Manifest {
  return {
    name,
    version: '1.0.0',
    entry: 'index.js',
    sandbox: 'inline',
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 128, timeoutMs: 30_000, concurrency: 16 },
    ...extra
  }
}

/** Registers the conformance fixture plugin in-process (inline tier). */
export async function addFixtures(platform: Platform): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(FIXTURE_DIR, 'plugin.json'), 'utf8')) as Manifest
  const def = ((await import(pathToFileURL(join(FIXTURE_DIR, 'index.js')).href)) as { default: unknown }).default
  platform.plugins.set(FIXTURE_DIR, manifestOf('conformance', manifest), inlineInstance(def, { log: platform.logger }))
}

/** An agent plugin: `helper` on /platform/agent/helper/mcp and `custom` on its own /custom/mcp endpoint. */
export function addAgents(platform: Platform): void {
  const def = definePlugin({
    agents: [
      agent({
        name: 'helper',
        version: '2.0.0',
        description: 'Helps',
        tools: [
          tool({
            name: 'add',
            description: 'Adds two numbers',
            input: {
              type: 'object',
              properties: { a: { type: 'number' }, b: { type: 'number' } },
              required: ['a', 'b']
            },
            run: (x: { a: number; b: number }) => x.a + x.b
          })
        ]
      }),
      agent({
        name: 'custom',
        endpoint: '/custom/mcp',
        description: 'Custom path',
        tools: [tool({ name: 'hello', description: 'Says hello', run: () => 'hello from custom' })]
      })
    ]
  })
  platform.plugins.set('/agents', manifestOf('agents'), inlineInstance(def, { log: platform.logger }))
}

export interface McpTest {
  tp: TestPlatform
  url: string
  base: string
  mcp: McpServer
}

export async function startMcp(
  overrides: Record<string, unknown> = {},
  opts: {
    fixtures?: boolean
    agents?: boolean
    gate?: ToolCallGate
    /** Adds at the MCP area's extension points, as an embedding application does before listening. */
    extend?: (p: Platform) => void
  } = {}
): Promise<McpTest> {
  const tp = await startTestPlatform(overrides, {
    install: async (p) => {
      await p.use(mcpArea)
      if (opts.gate !== undefined) p.extend(TOOL_CALL_GATE, opts.gate)
      if (opts.fixtures !== false) await addFixtures(p)
      if (opts.agents === true) addAgents(p)
      opts.extend?.(p)
    }
  })
  return { tp, base: tp.url, url: `${tp.url}/platform/mcp`, mcp: getMcp(tp.platform)! }
}

export const ACCEPT_BOTH = 'application/json, text/event-stream'

export function meta(caps: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
    ...extra
  }
}

/** Headers a 2026-07-28 client sends for one request. */
export function modernHeaders(
  method: string,
  name?: string,
  extra: Record<string, string> = {}
): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: ACCEPT_BOTH,
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name !== undefined ? { 'mcp-name': name } : {}),
    ...extra
  }
}

let nextId = 1
/** A stateless request with the right headers and `_meta`; returns status and parsed body (SSE: the final response). */
export async function modern(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: { caps?: Record<string, unknown>; headers?: Record<string, string>; metaExtra?: Record<string, unknown> } = {}
): Promise<{ status: number; body: any; events: any[]; res: Response }> {
  const name =
    method === 'tools/call' || method === 'prompts/get'
      ? (params.name as string)
      : method === 'resources/read'
        ? (params.uri as string)
        : method.startsWith('tasks/')
          ? (params.taskId as string)
          : undefined
  const id = nextId++
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...modernHeaders(method, name), ...opts.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(opts.caps, opts.metaExtra) } })
  })
  return { status: res.status, ...(await readBody(res)), res }
}

/** Reads a JSON or SSE response: `body` is the last JSON-RPC response, `events` every SSE message. */
export async function readBody(res: Response): Promise<{ body: any; events: any[] }> {
  const text = await res.text()
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const events = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
    return { body: [...events].reverse().find((e) => 'result' in e || 'error' in e), events }
  }
  return { body: text === '' ? undefined : JSON.parse(text), events: [] }
}

/** Opens a session-dialect session over HTTP; returns its id and a request helper. */
export async function openSession(
  url: string,
  version = '2025-11-25',
  capabilities: Record<string, unknown> = {}
): Promise<{
  sid: string
  init: any
  call: (
    method: string,
    params?: Record<string, unknown>,
    headers?: Record<string, string>
  ) => Promise<{ status: number; body: any; events: any[]; res: Response }>
}> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities, clientInfo: { name: 't', version: '1' } }
    })
  })
  const sid = res.headers.get('mcp-session-id')!
  const init = (await readBody(res)).body
  await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'mcp-session-id': sid,
      'mcp-protocol-version': init.result.protocolVersion
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
  })
  return {
    sid,
    init,
    call: async (method, params = {}, headers = {}) => {
      const r = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: ACCEPT_BOTH,
          'mcp-session-id': sid,
          'mcp-protocol-version': init.result.protocolVersion,
          ...headers
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params })
      })
      return { status: r.status, ...(await readBody(r)), res: r }
    }
  }
}
