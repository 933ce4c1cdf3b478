/**
 * The one mapping of a failure to the A2A binding's JSON-RPC error. Each error carries a
 * `google.rpc.ErrorInfo` detail naming its reason, as the binding asks.
 */
import { PlatformError, isWireError } from '../contracts/index.js'
import { A2A_ERRORS } from './errors.js'
import { RpcCode } from './rpc-code.js'

export { RpcCode }

const REASONS: Record<number, string> = {
  [-32700]: 'PARSE_ERROR',
  [-32600]: 'INVALID_REQUEST',
  [-32601]: 'METHOD_NOT_FOUND',
  [-32602]: 'INVALID_PARAMS',
  [-32603]: 'INTERNAL',
  [-32001]: 'TASK_NOT_FOUND',
  [-32002]: 'TASK_NOT_CANCELABLE',
  [-32003]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [-32004]: 'UNSUPPORTED_OPERATION',
  [-32005]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [-32007]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  [-32009]: 'VERSION_NOT_SUPPORTED'
}

/**
 * Any failure as the error the JSON-RPC endpoint answers: a code with an `rpcCode` as itself; a
 * REST code (a refusal: auth, unknown agent, a quota) keeps its status and message under -32600
 * (-32603 for a 5xx); anything else is an unexpected failure, `Internal error` in-band.
 */
export function a2aFailure(err: unknown): PlatformError {
  if (!isWireError(err)) return new PlatformError(A2A_ERRORS.A2A_METHOD_FAILED)
  if (err.rpcCode !== undefined) return err
  return new PlatformError(err.def, err.params, {
    message: err.message,
    status: err.status,
    rpcCode: err.status >= 500 ? RpcCode.InternalError : RpcCode.InvalidRequest,
    ...(err.headers !== undefined ? { headers: err.headers } : {})
  })
}

/** The JSON-RPC `error` member of a failure `a2aFailure` mapped. */
export function rpcErrorMember(e: PlatformError): { code: number; message: string; data: unknown[] } {
  const code = e.rpcCode ?? RpcCode.InternalError
  return {
    code,
    message: e.message,
    data: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: REASONS[code] ?? 'UNKNOWN',
        domain: 'a2a-protocol.org',
        metadata: (e.data as Record<string, string> | undefined) ?? {}
      }
    ]
  }
}

/** A JSON-RPC response carrying the error `err` maps to. */
export function rpcErrorBody(id: unknown, err: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: rpcErrorMember(a2aFailure(err)) })
}

export const invalidParams = (detail: string): PlatformError =>
  new PlatformError(A2A_ERRORS.A2A_INVALID_PARAMS, { detail })
export const unknownTask = (id: string): PlatformError =>
  new PlatformError(A2A_ERRORS.A2A_TASK_NOT_FOUND, { id }, { data: { taskId: id } })
