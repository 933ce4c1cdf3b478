import { defineErrors } from '../contracts/index.js'
import { RpcCode } from './rpc-code.js'

// Most A2A failures carry a message built where they are raised (it names the offending value).
const said = (p: Record<string, unknown>): string => String(p.detail)

/**
 * The A2A area's codes: the REST ones (the host card) and the JSON-RPC ones, each with its `rpcCode`.
 * A JSON-RPC failure answers 200 (in-band) unless it is a refusal around dispatch; a raise's `data`
 * is the `google.rpc.ErrorInfo` metadata (e.g. `{taskId}`) the binding puts in `error.data`.
 */
export const A2A_ERRORS = defineErrors({
  A2A_NO_ROOT_AGENT: {
    status: 404,
    message: (p) => `No agent card at the host's root: ${String(p.detail)}`,
    hint: "Set platform.a2a.root-agent; every agent's own card is at {agent path}/.well-known/agent-card.json"
  },
  A2A_PARSE_ERROR: {
    status: 200,
    rpcCode: RpcCode.ParseError,
    message: (p) => `Invalid JSON payload: ${String(p.detail)}`
  },
  A2A_INVALID_REQUEST: { status: 200, rpcCode: RpcCode.InvalidRequest, message: said },
  A2A_BODY_TOO_LARGE: {
    status: 413,
    rpcCode: RpcCode.InvalidRequest,
    message: (p) => `Request body too large (limit ${String(p.limit)} bytes)`
  },
  A2A_METHOD_NOT_FOUND: {
    status: 200,
    rpcCode: RpcCode.MethodNotFound,
    message: (p) => `Method not found: ${String(p.method)}`
  },
  A2A_INVALID_PARAMS: {
    status: 200,
    rpcCode: RpcCode.InvalidParams,
    message: (p) => `Invalid params: ${String(p.detail)}`
  },
  A2A_INTERNAL_ERROR: { status: 200, rpcCode: RpcCode.InternalError, message: said },
  /** An unexpected failure under a method: its detail is logged, not answered. */
  A2A_METHOD_FAILED: { status: 200, rpcCode: RpcCode.InternalError, message: 'Internal error' },
  A2A_TASK_NOT_FOUND: { status: 200, rpcCode: RpcCode.TaskNotFound, message: (p) => `Unknown task: ${String(p.id)}` },
  A2A_TASK_NOT_CANCELABLE: {
    status: 200,
    rpcCode: RpcCode.TaskNotCancelable,
    message: (p) => `Task not cancelable: ${String(p.id)}`
  },
  A2A_PUSH_NOT_SUPPORTED: {
    status: 200,
    rpcCode: RpcCode.PushNotificationNotSupported,
    message: 'Push notifications are not supported by this agent'
  },
  A2A_UNSUPPORTED_OPERATION: { status: 200, rpcCode: RpcCode.UnsupportedOperation, message: said },
  A2A_CONTENT_TYPE_NOT_SUPPORTED: { status: 200, rpcCode: RpcCode.ContentTypeNotSupported, message: said },
  A2A_VERSION_NOT_SUPPORTED: {
    status: 200,
    rpcCode: RpcCode.VersionNotSupported,
    message: (p) => `A2A version ${String(p.version)} is not supported (supported: 1.0)`
  },
  /** A call to a remote agent failed (transport, protocol or its JSON-RPC error); `remoteCode` is that error's code. */
  A2A_CALL_FAILED: { status: 502, message: said }
})
