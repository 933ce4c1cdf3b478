export { McpServer } from './mcp-server.js'
export { getMcp } from './key.js'
export { nameTarget } from './headers.js'
export type { HandlerContext } from './registrations.js'
