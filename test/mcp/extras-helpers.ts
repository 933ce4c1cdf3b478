import WebSocket from 'ws'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { getMcp, type McpServer } from '../../runtime/mcp/index.js'
import { mcpArea, mcpExtrasArea } from '../../runtime/mcp/install.js'
import type { Platform } from '../../runtime/platform.js'
import { addFixtures } from './helpers.js'

export interface ExtrasTest {
  tp: TestPlatform
  url: string
  base: string
  mcp: McpServer
}

/** A platform with MCP, the conformance fixtures and the MCP extras (auth, client tools, tracing). */
export async function startExtras(
  overrides: Record<string, unknown> = {},
  before?: (p: Platform) => void | Promise<void>
): Promise<ExtrasTest> {
  const tp = await startTestPlatform(overrides, {
    install: async (p) => {
      await p.use(mcpArea)
      await addFixtures(p)
      await before?.(p)
      await p.use(mcpExtrasArea)
    }
  })
  return { tp, base: tp.url, url: `${tp.url}/platform/mcp`, mcp: getMcp(tp.platform)! }
}

/**
 * A plain JSON-RPC client over WebSocket: `rpc(msg)` resolves with the response of that id;
 * other frames go to `onOther`.
 */
export async function wsClient(
  url: string,
  headers: Record<string, string> = {},
  onOther: (m: any, ws: WebSocket) => void = () => {}
): Promise<{ ws: WebSocket; rpc: (msg: Record<string, unknown>) => Promise<any> }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers })
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  const waiting = new Map<unknown, (m: any) => void>()
  ws.on('message', (data) => {
    const m = JSON.parse(String(data))
    const w = m.method === undefined ? waiting.get(m.id) : undefined
    if (w !== undefined) {
      waiting.delete(m.id)
      w(m)
    } else onOther(m, ws)
  })
  return {
    ws,
    rpc: async (msg) =>
      await new Promise((resolve) => {
        waiting.set(msg.id, resolve)
        ws.send(JSON.stringify({ jsonrpc: '2.0', ...msg }))
      })
  }
}
