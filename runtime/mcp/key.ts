import type { Platform } from '../platform.js'
import { AreaKey, ExtensionPoint } from '../contracts/index.js'
import type { McpServer } from './mcp-server.js'
import type { BeforeDispatch, HttpGuard } from './core.js'
import type { InvocationWrapper } from './calls.js'
import type { ToolRegistration } from './registrations.js'
import type { TokenValidator } from './auth/validators.js'

/** The platform's MCP server, provided by the mcp area when `platform.mcp.enabled`. */
export const MCP = new AreaKey<McpServer>('mcp')

/** The MCP server installed on a platform, for code that registers tools in code or reads its registry. */
export function getMcp(platform: Platform): McpServer | undefined {
  return platform.hasArea(MCP) ? platform.area(MCP) : undefined
}

/**
 * Hooks run before every dispatched method, in the order added (OAuth on WebSocket messages, the
 * tracing context of session-dialect requests); one throwing a PlatformError with an `rpcCode`
 * rejects the request.
 */
export const MCP_BEFORE_DISPATCH = new ExtensionPoint<BeforeDispatch>('mcp', 'before-dispatch')

/** Guards run before every HTTP request to an MCP endpoint, GET and DELETE too; false = it answered (OAuth). */
export const MCP_HTTP_GUARDS = new ExtensionPoint<HttpGuard>('mcp', 'http-guard')

/** The wrapper around each tools/call, resources/read and prompts/get (tracing spans); none runs them bare. */
export const MCP_INVOCATION_WRAPPER = new ExtensionPoint<InvocationWrapper>('mcp', 'invocation-wrapper', true)

/**
 * Tools another area serves on the MCP endpoints (the admin tools), beside the plugins' and those
 * registered in code; on a name two contribute, the first added is served.
 */
export const MCP_TOOLS = new ExtensionPoint<ToolRegistration>('mcp', 'tools')

/** A token validator known by name: `org.platform.auth.tokenValidator` may name it instead of `jwt`. */
export interface NamedTokenValidator {
  readonly name: string
  readonly validate: TokenValidator
}

/** Token validators added in code, read when MCP authorization installs; the last one added under a name wins. */
export const MCP_TOKEN_VALIDATORS = new ExtensionPoint<NamedTokenValidator>('mcp', 'token-validator')
