/** The JSON-RPC error codes of the A2A binding: the standard ones and the A2A-specific ones (-32001 to -32009). */
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
