import { defineErrors } from '../contracts/index.js'
import { RpcCode } from './rpc-code.js'

// Most A2A failures carry a message built where they are raised (it names the offending value).
const said = (p: Record<string, unknown>): string => String(p.detail)

/**
 * The A2A area's codes: the REST ones (the host card) and the JSON-RPC ones, each with its `rpcCode`.
 * A JSON-RPC failure answers 200 (in-band) unless it is a refusal around dispatch; a raise's `data`
 * is the `google.rpc.ErrorInfo` metadata (e.g. `{taskId}`) the binding puts in `error.data`.
 * A capacity refusal is JSON-RPC -32603, the code A2A gives a temporary failure such as an
 * exceeded rate limit, with the HTTP status that tells a client whether it alone is over (429) or
 * the server is full (503).
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
    message: (p) => `A2A version ${String(p.version)} is not supported (supported: 1.0, 0.3)`
  },
  /** A call to a remote agent failed (transport, protocol or its JSON-RPC error); `remoteCode` is that error's code. */
  A2A_CALL_FAILED: { status: 502, message: said },
  A2A_TASK_QUOTA: {
    status: 429,
    rpcCode: RpcCode.InternalError,
    message: (p) =>
      `Too many A2A tasks for ${String(p.who)}: all ${String(p.limit)} of its tasks are still running (${String(p.key)}); wait for one to finish or cancel one`,
    hint: 'A finished task makes room for the next one of the same caller at once'
  },
  A2A_TASK_CAPACITY: {
    status: 503,
    rpcCode: RpcCode.InternalError,
    message: (p) =>
      p.scope === 'anonymous'
        ? `Too many anonymous A2A tasks: anonymous callers hold their limit of ${String(p.limit)} running tasks; the rest of platform.a2a.max-tasks is kept for authenticated principals (${String(p.key)})`
        : `Too many A2A tasks: the server holds its limit of ${String(p.limit)} tasks, and no anonymous task and none of the caller's own has finished (${String(p.key)})`,
    hint: 'Finished tasks make room; authenticated principals keep platform.a2a.tasks.authenticated-reserve of the cap'
  },
  A2A_STORE_UNAVAILABLE: {
    status: 503,
    rpcCode: RpcCode.InternalError,
    message: (p) => `The A2A task store (${String(p.store)}) cannot be reached`,
    hint: 'Retry once the server is back (GET /readyz reports it); what was acknowledged before is kept'
  },
  A2A_MESSAGE_TOO_LARGE: {
    status: 413,
    rpcCode: RpcCode.InvalidRequest,
    message: (p) =>
      `Request body too large: an A2A request is at most ${String(p.limit)} bytes (platform.ai.endpoint.max-message-bytes, capped by platform.server.body-limit-bytes)`,
    hint: 'Send a shorter message, or raise platform.ai.endpoint.max-message-bytes'
  }
})
