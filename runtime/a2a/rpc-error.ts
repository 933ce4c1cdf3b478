/**
 * JSON-RPC errors of the A2A binding: the standard codes and the A2A-specific ones (-32001 to
 * -32009). Each error carries a `google.rpc.ErrorInfo` detail naming its reason, as the binding asks.
 */

export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  TaskNotFound: -32001,
  TaskNotCancelable: -32002,
  PushNotificationNotSupported: -32003,
  UnsupportedOperation: -32004,
  ContentTypeNotSupported: -32005,
  ExtendedAgentCardNotConfigured: -32007,
  VersionNotSupported: -32009
} as const

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

/** An error a method answers with; thrown anywhere under a method and turned into the `error` member. */
export class A2aError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly metadata: Record<string, string> = {}
  ) {
    super(message)
    this.name = 'A2aError'
  }

  toJson(): { code: number; message: string; data: unknown[] } {
    return {
      code: this.code,
      message: this.message,
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: REASONS[this.code] ?? 'UNKNOWN',
          domain: 'a2a-protocol.org',
          metadata: this.metadata
        }
      ]
    }
  }
}

export const invalidParams = (detail: string): A2aError =>
  new A2aError(RpcCode.InvalidParams, `Invalid params: ${detail}`)
export const unknownTask = (id: string): A2aError =>
  new A2aError(RpcCode.TaskNotFound, `Unknown task: ${id}`, { taskId: id })

/** A JSON-RPC response carrying an error. */
export function rpcErrorBody(id: unknown, err: A2aError): string {
  return JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: err.toJson() })
}
