import { PlatformError, defineErrors, isPlatformError } from '../contracts/index.js'

/**
 * JSON-RPC and MCP error codes the MCP server emits (MCP 2025-11-25 and 2026-07-28 error codes;
 * the names follow the MCP TypeScript SDK's `ErrorCode`).
 */
export const ErrorCode = {
  /** The body is not valid JSON. */
  ParseError: -32700,
  /** Not a valid JSON-RPC request: batch, bad envelope, bad id, or a request the state does not allow. */
  InvalidRequest: -32600,
  /** The method does not exist, or not in this dialect. */
  MethodNotFound: -32601,
  /** The method exists but its params are wrong (unknown tool, bad arguments, bad _meta envelope). */
  InvalidParams: -32602,
  /** A failure inside the server or a handler. */
  InternalError: -32603,
  /** Legacy transport rejection (SDK v1 compatible): missing session header, too many sessions. */
  ServerError: -32000,
  /** The Mcp-Session-Id is unknown or expired; also the OAuth rejection code. */
  SessionNotFound: -32001,
  /** resources/read of an unknown URI before 2026-07-28 (from then on it is InvalidParams). */
  ResourceNotFoundLegacy: -32002,
  /** An MCP-Protocol-Version or routing header disagrees with the request body. */
  HeaderMismatch: -32020,
  /** The request needs a client capability (or the tasks extension) the client did not declare. */
  MissingCapability: -32021,
  /** The `_meta` protocol version is not one this server speaks. */
  UnsupportedVersion: -32022
} as const
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

/** JSON-RPC reserves this range for protocol errors; a handler's error inside it passes through as is. */
export const RESERVED_CODES = { min: -32768, max: -32000 } as const

/** The HTTP status an MCP error answers with on the HTTP transport. */
export const HttpStatus = {
  /** An in-band JSON-RPC error: the HTTP exchange itself succeeded. */
  InBand: 200,
  /** Envelope, header and version errors, rejected before dispatch. */
  BadRequest: 400,
  /** No valid bearer token (MCP authorization; carries a `WWW-Authenticate` challenge). */
  Unauthorized: 401,
  /** A token without the scopes the endpoint requires. */
  Forbidden: 403,
  /** An unknown session. */
  NotFound: 404,
  /** A per-caller limit (sessions per principal or per client address). */
  TooManyRequests: 429,
  /** An unexpected failure outside any handler. */
  InternalError: 500,
  /** A capacity limit (session cap). */
  Unavailable: 503
} as const
export type HttpStatus = (typeof HttpStatus)[keyof typeof HttpStatus]

// Most MCP failures carry a message built where they are raised (it names the offending value).
const said = (p: Record<string, unknown>): string => String(p.detail)

/**
 * The MCP area's codes. `status` is what the HTTP transport answers with: 200 for an in-band JSON-RPC
 * error (the HTTP exchange itself succeeded), 4xx/5xx for a rejection before or around dispatch.
 * A raise passes the message as `detail`; `rpcCode` is the JSON-RPC `error.code` on the wire.
 */
export const MCP_ERRORS = defineErrors({
  MCP_BAD_MESSAGE: { status: HttpStatus.BadRequest, rpcCode: ErrorCode.InvalidRequest, message: said },
  MCP_INVALID_REQUEST: { status: HttpStatus.InBand, rpcCode: ErrorCode.InvalidRequest, message: said },
  MCP_POLICY_DENIED: {
    status: HttpStatus.InBand,
    rpcCode: ErrorCode.InvalidRequest,
    message: (p) => `Tool '${String(p.tool)}' denied by policy '${String(p.policy)}': ${String(p.reason)}`
  },
  MCP_METHOD_NOT_FOUND: { status: HttpStatus.InBand, rpcCode: ErrorCode.MethodNotFound, message: said },
  MCP_METHOD_NOT_STATELESS: {
    status: HttpStatus.NotFound,
    rpcCode: ErrorCode.MethodNotFound,
    message: (p) => `Method '${String(p.method)}' is not available in the ${String(p.version)} stateless dialect`
  },
  MCP_INVALID_PARAMS: { status: HttpStatus.InBand, rpcCode: ErrorCode.InvalidParams, message: said },
  MCP_BAD_META: { status: HttpStatus.BadRequest, rpcCode: ErrorCode.InvalidParams, message: said },
  MCP_INTERNAL_ERROR: { status: HttpStatus.InBand, rpcCode: ErrorCode.InternalError, message: said },
  MCP_DISPATCH_FAILED: {
    status: HttpStatus.InternalError,
    rpcCode: ErrorCode.InternalError,
    message: 'Internal error'
  },
  /** A JSON-RPC error a handler or a task reported; the raise carries its own `rpcCode`. */
  MCP_HANDLER_ERROR: { status: HttpStatus.InBand, rpcCode: ErrorCode.InternalError, message: said },
  MCP_SESSION_REQUIRED: { status: HttpStatus.BadRequest, rpcCode: ErrorCode.ServerError, message: said },
  MCP_SESSION_NOT_FOUND: {
    status: HttpStatus.NotFound,
    rpcCode: ErrorCode.SessionNotFound,
    message: 'Session not found',
    hint: 'Send initialize again: the session ended, idled out or belongs to another caller'
  },
  MCP_SESSION_LIMIT: { status: HttpStatus.InBand, rpcCode: ErrorCode.ServerError, message: said },
  MCP_SESSION_QUOTA: { status: HttpStatus.TooManyRequests, rpcCode: ErrorCode.ServerError, message: said },
  MCP_SESSION_CAP: { status: HttpStatus.Unavailable, rpcCode: ErrorCode.ServerError, message: said },
  MCP_STORE_UNAVAILABLE: {
    status: HttpStatus.Unavailable,
    rpcCode: ErrorCode.InternalError,
    message: (p) => `The MCP session store (${String(p.store)}) cannot be reached`,
    hint: 'Retry once the server is back (GET /readyz reports it); sessions kept before are kept'
  },
  MCP_RESOURCE_NOT_FOUND: {
    status: HttpStatus.InBand,
    rpcCode: ErrorCode.ResourceNotFoundLegacy,
    message: (p) => `Resource not found: ${String(p.uri)}`
  },
  MCP_HEADER_MISMATCH: { status: HttpStatus.BadRequest, rpcCode: ErrorCode.HeaderMismatch, message: said },
  MCP_MISSING_CAPABILITY: { status: HttpStatus.BadRequest, rpcCode: ErrorCode.MissingCapability, message: said },
  MCP_UNSUPPORTED_VERSION: {
    status: HttpStatus.BadRequest,
    rpcCode: ErrorCode.UnsupportedVersion,
    message: (p) => `Unsupported protocol version: ${String(p.version)}`
  },
  MCP_UNAUTHORIZED: {
    status: HttpStatus.Unauthorized,
    rpcCode: ErrorCode.SessionNotFound,
    message: 'Unauthorized',
    hint: 'Send a valid bearer token (Authorization: Bearer ...)'
  },
  MCP_FORBIDDEN: {
    status: HttpStatus.Forbidden,
    rpcCode: ErrorCode.SessionNotFound,
    message: 'Forbidden: insufficient scope'
  },
  /** `platform.mcp.servers` names a server wrongly or mixes its transports: start-up stops. */
  MCP_SERVER_CONFIG: {
    status: HttpStatus.InternalError,
    operator: true,
    message: (p) => `platform.mcp.servers.${String(p.server)}: ${String(p.detail)}`,
    hint: 'Fix the server entry in platform.mcp.servers (docs/mcp.md, "Using tools of other MCP servers")'
  },
  /** A tool of another MCP server was called while that server is unreachable: an `isError` result. */
  MCP_SERVER_UNAVAILABLE: {
    status: HttpStatus.Unavailable,
    message: (p) => `MCP server '${String(p.server)}' is unavailable: ${String(p.detail)}`,
    hint: 'The platform reconnects with backoff; GET /api/admin/mcp/servers shows its state'
  },
  /** Another MCP server answered a call with a JSON-RPC error (an unknown tool, bad arguments). */
  MCP_SERVER_ERROR: {
    status: 502,
    message: (p) => `MCP server '${String(p.server)}' refused the call: ${String(p.detail)}`
  },
  /** Another MCP server answered a tool call with something that is not a tool result: an `isError` result. */
  MCP_SERVER_INVALID_RESULT: {
    status: 502,
    message: (p) => `MCP server '${String(p.server)}' answered with an invalid tool result: ${String(p.detail)}`
  },
  /** A tool of another MCP server did not answer within its `timeout-ms`. */
  MCP_SERVER_TIMEOUT: {
    status: 504,
    message: (p) => `MCP server '${String(p.server)}' did not answer tool '${String(p.tool)}' within ${String(p.ms)} ms`
  },
  /** A JWT that did not validate; the message says why (logged, never sent to the client). */
  MCP_JWT_INVALID: { status: 500, internal: true, message: (p) => String(p.detail) },
  /**
   * The client answered a server-to-client tool call with an error (a JSON-RPC error or
   * `isError: true`): `toolName`, and the client's `code`, `data` or `result` where it sent them.
   */
  MCP_CLIENT_TOOL_FAILED: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** The client did not answer a server-to-client tool call within the timeout. */
  MCP_CLIENT_TOOL_TIMEOUT: {
    status: 500,
    internal: true,
    message: (p) => `client tool '${p.toolName}' did not answer within ${p.timeoutMs} ms`
  }
})

/**
 * The one mapping of a failure to its JSON-RPC form: a PlatformError with an `rpcCode` answers as
 * itself; anything else is an unexpected failure (500, -32603, its detail kept out of the wire).
 */
export function rpcFailure(err: unknown): PlatformError {
  return isPlatformError(err) && err.rpcCode !== undefined ? err : new PlatformError(MCP_ERRORS.MCP_DISPATCH_FAILED)
}

/** Whether `err` is one the MCP edge answers as itself (not an unexpected failure to log). */
export function isRpcFailure(err: unknown): err is PlatformError {
  return isPlatformError(err) && err.rpcCode !== undefined
}

/** The JSON-RPC `error` member of a failure. */
export function rpcErrorMember(e: PlatformError): { code: number; message: string; data?: unknown } {
  const code = e.rpcCode ?? ErrorCode.InternalError
  return e.data === undefined ? { code, message: e.message } : { code, message: e.message, data: e.data }
}

export function rpcError(id: unknown, err: { code: number; message: string; data?: unknown }): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id === undefined ? null : id, error: err }
}
