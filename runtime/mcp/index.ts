export { McpServer } from './mcp-server.js'
export { MCP, getMcp } from './key.js'
export { McpError } from './errors.js'
export { nameTarget } from './headers.js'
export type {
  ToolRegistration,
  ResourceRegistration,
  PromptRegistration,
  HandlerContext,
  InvokeContext
} from './registry.js'
export type { ParamSpec } from './schema.js'
export type { BeforeDispatch, HttpGuard } from './core.js'
export type { InvocationWrapper } from './calls.js'
export type { CallContext, EndpointRef } from './types.js'
export { CLIENT_TOOLS, getClientTools, type ClientToolBridge } from './client-tools.js'
