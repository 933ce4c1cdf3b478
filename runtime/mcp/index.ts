export { McpServer } from './mcp-server.js'
export { getMcp } from './key.js'
export type { HandlerContext } from './registry.js'
