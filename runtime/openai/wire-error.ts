import { PlatformError, isWireError } from '../contracts/index.js'
import { HTTP_ERRORS } from '../http/index.js'

/** OpenAI's error body: what the official clients parse into their typed errors. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string }
}

/**
 * OpenAI's error `type` for a status: the clients pick their error class from the status, and
 * code that branches on `type` finds the names OpenAI itself sends.
 */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 429) return 'rate_limit_error'
  if (status >= 500) return 'server_error'
  return 'invalid_request_error'
}

/** Any failure as OpenAI's error body and its status; anything but a PlatformError is a 500 that says nothing more. */
export function openAiError(err: unknown): { status: number; body: OpenAiErrorBody } {
  const e = isWireError(err) ? err : new PlatformError(HTTP_ERRORS.INTERNAL)
  const param = typeof e.params.param === 'string' ? e.params.param : null
  const message = e.hint === undefined ? e.message : `${e.message}. ${e.hint}`
  return { status: e.status, body: { error: { message, type: errorType(e.status), param, code: e.code } } }
}
