/** JSON-RPC error codes the MCP server emits (MCP spec 2025-11-25 and 2026-07-28 §Error Codes). */
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603
/** Legacy transport rejections (SDK v1 compatible); 2026-07-28 classes -32000..-32019 as legacy. */
export const SERVER_ERROR = -32000
export const SESSION_NOT_FOUND = -32001
export const RESOURCE_NOT_FOUND_LEGACY = -32002
export const HEADER_MISMATCH = -32020
export const MISSING_CAPABILITY = -32021
export const UNSUPPORTED_VERSION = -32022

/**
 * A JSON-RPC error raised anywhere under dispatch. `httpStatus` is what the HTTP transport answers
 * with (400 for envelope errors, 404 for unknown methods in the stateless dialect, 200 in-band).
 */
export class McpError extends Error {
  /** `headers`: response headers an HTTP transport adds (e.g. `WWW-Authenticate` on a 401 from an auth hook). */
  constructor (readonly code: number, message: string, readonly data?: unknown, readonly httpStatus = 200, readonly headers?: Record<string, string>) {
    super(message)
    this.name = 'McpError'
  }

  toJson (): { code: number, message: string, data?: unknown } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data }
  }
}

export function rpcError (id: unknown, err: { code: number, message: string, data?: unknown }): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id === undefined ? null : id, error: err }
}
