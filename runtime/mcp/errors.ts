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

/**
 * A JSON-RPC error raised anywhere under dispatch. `httpStatus` is what the HTTP transport answers
 * with (400 for envelope errors, 404 for unknown methods in the stateless dialect, 200 in-band).
 */
export class McpError extends Error {
  /** `headers`: response headers an HTTP transport adds (e.g. `WWW-Authenticate` on a 401 from an auth hook). */
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly httpStatus: number = HttpStatus.InBand,
    readonly headers?: Record<string, string>
  ) {
    super(message)
    this.name = 'McpError'
  }

  toJson(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data }
  }
}

/** An error the HTTP transport answers with `status` rather than in-band (defaults to 400). */
export function rejection(
  code: ErrorCode,
  message: string,
  status: HttpStatus = HttpStatus.BadRequest,
  data?: unknown
): McpError {
  return new McpError(code, message, data, status)
}

export function rpcError(id: unknown, err: { code: number; message: string; data?: unknown }): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id === undefined ? null : id, error: err }
}
