export { McpServer } from './mcp-server.js'
export { getMcp, MCP_TOOLS } from './key.js'
export { nameTarget } from './headers.js'
export type { HandlerContext } from './registrations.js'
