import type { McpCore, BeforeDispatch, HttpGuard } from './core.js'
import type { McpRegistry } from './registry.js'
import type { ToolRegistration, ResourceRegistration, PromptRegistration } from './registrations.js'
import type { ParamSpec } from './schema.js'
import type { InvocationWrapper } from './calls.js'
import type { TokenValidator } from './auth/validators.js'
import type { ExternalServers } from './external-servers.js'

/**
 * The MCP server of a platform: programmatic registration beside plugin contributions, and the
 * hooks OAuth (`beforeDispatch`) and tracing (`wrap`) plug into.
 */
export class McpServer {
  /** Token validators registered in code, by name (`org.platform.auth.tokenValidator` picks one). */
  readonly tokenValidators = new Map<string, TokenValidator>()
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

  /**
   * Runs before every dispatched method (auth goes here); throw a PlatformError with an `rpcCode`
   * (e.g. `MCP_ERRORS.MCP_UNAUTHORIZED`) to reject.
   */
  addBeforeDispatch(hook: BeforeDispatch): void {
    this.core.beforeDispatch.push(hook)
  }

  /** Runs before every HTTP request on the MCP endpoints (GET and DELETE too); false = it answered (OAuth). */
  addHttpGuard(guard: HttpGuard): void {
    this.core.httpGuards.push(guard)
  }

  /** Wraps each tools/call, resources/read and prompts/get (tracing spans go here). */
  setInvocationWrapper(wrap: InvocationWrapper): void {
    this.core.wrap = wrap
  }
}
