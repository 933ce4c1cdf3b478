export { HttpServer } from './server.js'
export { Context, requestHeaders, upgradeWith } from './context.js'
export { SseStream } from './sse.js'
export { HTTP_ERRORS } from './errors.js'
export { parseJsonBody } from './json-body.js'
export { statusLine } from './status.js'
export { readCapped, BodyTooLargeError } from './read-capped.js'
export { errorTable, ERR_BEGIN, ERR_END } from './error-table.js'
export type { RouteDoc, DocumentedRoute, JsonSchema } from './route-doc.js'
export { setLogPageHeaders, CALLERS, type Callers } from './log-page-headers.js'
export {
  OwnerQuota,
  clientAddress,
  type OwnerLimits,
  type OwnerRefusal,
  type QuotaOwner
} from './owner-quota.js'
export { addressBucket } from './address-bucket.js'
export { OriginPolicy } from './origin-policy.js'
