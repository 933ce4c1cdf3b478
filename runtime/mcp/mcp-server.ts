import type { McpCore } from './core.js'
import type { McpRegistry } from './registry.js'
import type { ToolRegistration, ResourceRegistration, PromptRegistration } from './registrations.js'
import type { ParamSpec } from './schema.js'
import type { ExternalServers } from './external-servers.js'

/**
 * The MCP server of a platform: tools, resources and prompts registered in code at run time beside
 * the plugins' contributions. What other areas add at install (hooks, tools, token validators)
 * goes through the extension points of key.ts instead.
 */
export class McpServer {
  /** The path an agent's MCP endpoint is served at, or undefined when none is (set by the install that mounts them). */
  agentEndpoint: (agent: string) => string | undefined = () => undefined

  constructor(
    readonly core: McpCore,
    readonly registry: McpRegistry,
    /** The other MCP servers whose tools join the registry (`platform.mcp.servers`). */
    readonly external: ExternalServers
  ) {}

  /** `registerTool(name, description, params, handler)` or one registration object. */
  registerTool(
    nameOrReg: string | ToolRegistration,
    description?: string,
    params?: ParamSpec[],
    handler?: ToolRegistration['handler']
  ): () => void {
    const reg =
      typeof nameOrReg === 'string'
        ? { name: nameOrReg, description: description ?? '', params: params ?? [], handler: handler! }
        : nameOrReg
    return this.registry.registerTool(reg)
  }

  /** `registerResource(uri, name, description, mimeType, handler)` or one registration object. */
  registerResource(
    uriOrReg: string | ResourceRegistration,
    name?: string,
    description?: string,
    mimeType?: string,
    handler?: ResourceRegistration['handler']
  ): () => void {
    const reg =
      typeof uriOrReg === 'string'
        ? {
            uri: uriOrReg,
            name: name ?? uriOrReg,
            description: description ?? '',
            mimeType: mimeType ?? 'text/plain',
            handler: handler!
          }
        : uriOrReg
    return this.registry.registerResource(reg)
  }

  /** `registerPrompt(name, description, params, handler)` or one registration object. */
  registerPrompt(
    nameOrReg: string | PromptRegistration,
    description?: string,
    params?: ParamSpec[],
    handler?: PromptRegistration['handler']
  ): () => void {
    const reg =
      typeof nameOrReg === 'string'
        ? { name: nameOrReg, description: description ?? '', params: params ?? [], handler: handler! }
        : nameOrReg
    return this.registry.registerPrompt(reg)
  }
}
