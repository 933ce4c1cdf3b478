import type { Platform } from '../platform.js'
import { AreaKey } from '../contracts/index.js'
import type { McpServer } from './mcp-server.js'

/** The platform's MCP server, provided by the mcp area when `platform.mcp.enabled`. */
export const MCP = new AreaKey<McpServer>('mcp')

/** The MCP server installed on a platform (other areas register admin tools through it). */
export function getMcp(platform: Platform): McpServer | undefined {
  return platform.hasArea(MCP) ? platform.area(MCP) : undefined
}
