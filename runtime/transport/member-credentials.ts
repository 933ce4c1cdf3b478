import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { Context } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Resource } from './broadcaster.js'
import { TRANSPORT_ERRORS } from './errors.js'
import type { EndpointTransport } from './endpoint-settings.js'

/** Header (or `uuid` query parameter) naming the resource a POST, DELETE or poll comes from. */
export const RESOURCE_HEADER = 'x-platform-resource'
/** Header (or `token` query parameter) proving the sender is that resource (SSE, long-polling). */
export const TOKEN_HEADER = 'x-platform-token'

/** A member's secret, handed to it when it joins over SSE or long-polling. */
export function newToken(): string {
  return randomBytes(24).toString('base64url')
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The resource named by the request, which must belong to broadcaster `id` and be proven by its
 * token: uuids are public (rooms announce them), so a uuid alone must not let anyone post as,
 * poll for or remove another member.
 */
export function memberOf(transport: Pick<EndpointTransport, 'resource'>, ctx: Context, id: string): Resource {
  const uuid = ctx.headers[RESOURCE_HEADER] ?? ctx.query.get('uuid') ?? ''
  if (uuid === '') throw new PlatformError(TRANSPORT_ERRORS.MISSING_RESOURCE_ID)
  const r = transport.resource(uuid)
  if (r === undefined || r.broadcaster.id !== id)
    throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_RESOURCE, { uuid: uuid.slice(0, 200) })
  const token = ctx.headers[TOKEN_HEADER] ?? ctx.query.get('token') ?? ''
  if (r.token === undefined || !sameToken(token, r.token))
    throw new PlatformError(TRANSPORT_ERRORS.RESOURCE_FORBIDDEN, { uuid })
  return r
}
