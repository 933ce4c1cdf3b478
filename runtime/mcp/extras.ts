import type { Platform } from '../platform.js'
import { getMcp } from './key.js'
import { installMcpAuth } from './auth/index.js'
import { installClientTools } from './client-tools.js'
import { installTracing } from './tracing.js'

/**
 * The opt-in extras around the MCP server: the OAuth 2.0 resource server, JWT
 * principals, server-to-client tool calls and tracing spans. Installed after installMcp; the
 * guards and hooks go in at the MCP area's extension points, nothing is set on its server.
 */
export async function installMcpExtras(platform: Platform): Promise<void> {
  const mcp = getMcp(platform)
  if (mcp === undefined) return
  installMcpAuth(platform)
  installClientTools(platform, mcp)
  if (platform.config.get('platform.mcp.tracing.enabled')) installTracing(platform)
}
