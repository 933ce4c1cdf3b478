import type { ParamSpec } from './schema.js'
import type { InvokeContext } from './entries.js'
import type { JsonObject } from './types.js'

// What code registers programmatically (McpServer.registerTool and its siblings), beside plugins.

/** Helpers a programmatic handler gets as its second argument (injectables never reach the schema). */
export interface HandlerContext extends Omit<InvokeContext, 'signal'> {
  /** Aborted when the client cancels or goes away. */
  signal: AbortSignal
  config: { get: <T = unknown>(key: string) => T }
  logger: {
    debug: (o: unknown, m?: string) => void
    info: (o: unknown, m?: string) => void
    warn: (o: unknown, m?: string) => void
    error: (o: unknown, m?: string) => void
  }
  broadcaster: (topic: string) => { id: string; broadcast: (message: unknown) => void }
}

export interface ToolRegistration {
  name: string
  description?: string
  title?: string
  params?: ParamSpec[]
  /** A full JSON Schema instead of `params`. */
  inputSchema?: JsonObject
  longRunning?: boolean
  taskSupport?: 'optional' | 'required'
  uiResource?: string
  iconUrl?: string
  /** Serve on this agent's endpoint instead of `/platform/mcp`. */
  agent?: string
  handler: (args: JsonObject, ctx: HandlerContext) => unknown
}
export interface ResourceRegistration {
  uri: string
  name?: string
  title?: string
  description?: string
  mimeType?: string
  agent?: string
  handler: (uri: string, ctx: HandlerContext) => unknown
}
export interface PromptRegistration {
  name: string
  title?: string
  description?: string
  params?: ParamSpec[]
  agent?: string
  handler: (args: Record<string, string>, ctx: HandlerContext) => unknown
  complete?: (argument: string, value: string) => string[] | Promise<string[]>
}
