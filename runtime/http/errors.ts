import { defineErrors } from '../contracts/index.js'

// Every REST error body is `{"error": message, "code": "PLT_ERR_<NAME>", "hint"?: ...}`; codes are
// stable and never reused. `test/http/errors.test.ts` checks that each code of the union is documented.

/**
 * The HTTP core's codes: routing, bodies, queries, CORS, readiness. Every area's own codes live in
 * its `runtime/<area>/errors.ts`; `runtime/areas.ts` gathers the union.
 */
export const HTTP_ERRORS = defineErrors({
  NOT_FOUND: { status: 404, message: 'Not found' },
  /** The server could not bind (port taken, address not on this host, port needs privileges); `socketCode` says why. */
  LISTEN_FAILED: {
    status: 500,
    operator: true,
    message: (p) => String(p.detail),
    hint: 'Free the port or set platform.server.host and platform.server.port to an address of this host'
  },
  METHOD_NOT_ALLOWED: { status: 405, message: (p) => `Method ${p.method} not allowed on ${p.path}` },
  BODY_TOO_LARGE: {
    status: 413,
    message: (p) => `Request body too large (limit ${p.limit} bytes)`,
    hint: 'Raise platform.server.body-limit-bytes or send a smaller body'
  },
  /** A fetched response (not a request) over the caller's bound: readCapped refuses it. */
  RESPONSE_TOO_LARGE: { status: 500, internal: true, message: (p) => `larger than ${p.limit} bytes` },
  MALFORMED_JSON: { status: 400, message: (p) => `Malformed JSON body: ${p.detail}` },
  JSON_TOO_DEEP: { status: 400, message: (p) => `JSON body nested deeper than ${p.limit} levels` },
  EMPTY_BODY: { status: 400, message: 'Request body is empty; a JSON body is required' },
  INVALID_BODY: { status: 400, message: (p) => `Invalid request body: ${p.detail}` },
  INVALID_QUERY: { status: 400, message: (p) => `Invalid query parameter '${p.name}': ${p.detail}` },
  INVALID_CURSOR: {
    status: 400,
    message: (p) => `Invalid cursor for ${p.what}: it is not one this server wrote for that listing`,
    hint: 'Pass the X-Next-Cursor of the previous page unchanged, or leave cursor out to start from the newest'
  },
  CORS_ORIGIN_DENIED: {
    status: 403,
    message: (p) => `Origin '${p.origin}' is not allowed`,
    hint: 'Add it to platform.server.cors.origins'
  },
  ORIGIN_FORBIDDEN: {
    status: 403,
    message: (p) => `Origin '${p.origin}' may not open ${p.path}`,
    hint: 'List the origin in platform.server.allowed-origins (a same-origin page under a DNS name must be listed too)'
  },
  INTERNAL: { status: 500, message: 'Internal server error' },
  SHUTTING_DOWN: { status: 503, message: 'Server is shutting down' },
  NOT_READY: { status: 503, message: 'Not ready' }
})
