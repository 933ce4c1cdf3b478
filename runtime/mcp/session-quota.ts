import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import { OwnerQuota, type OwnerLimits, type OwnerRefusal, type QuotaOwner } from '../http/index.js'

/** Who opened a session: its principal, or null and the client address for an anonymous caller. */
export type SessionOwner = QuotaOwner

/**
 * Who is asking, the way sessions are bound: its principal, or (anonymous) its client address.
 * A session answers only to the owner that opened it.
 */
export function callerOf(c: { principal?: string | null; address?: string }): SessionOwner {
  return { principal: c.principal ?? null, ...(c.address !== undefined ? { address: c.address } : {}) }
}

export type SessionLimits = OwnerLimits
export type SessionRefusal = OwnerRefusal

const KEYS = {
  server: 'platform.mcp.max-sessions',
  principal: 'platform.mcp.sessions.max-per-principal',
  address: 'platform.mcp.sessions.max-per-address',
  anonymous: 'platform.mcp.sessions.authenticated-reserve'
} as const

/** Live-session counts per principal and per client address, under the MCP session keys. */
export class SessionQuota extends OwnerQuota {
  constructor(limits: SessionLimits) {
    super(limits, KEYS)
  }
}

/** The JSON-RPC error of a refusal: HTTP 429 for a per-caller limit, 503 for the server cap and the anonymous pool. */
export function refusalError(r: SessionRefusal): PlatformError {
  const data = { limit: r.limit, key: r.key }
  if (r.scope === 'anonymous')
    return new PlatformError(
      MCP_ERRORS.MCP_SESSION_CAP,
      {
        detail: `Too many anonymous sessions: anonymous callers hold their limit of ${r.limit} live sessions; the rest of platform.mcp.max-sessions is kept for authenticated principals (${r.key})`
      },
      { data }
    )
  if (r.scope === 'server')
    return new PlatformError(
      MCP_ERRORS.MCP_SESSION_CAP,
      { detail: `Too many sessions: the server holds its limit of ${r.limit} live sessions (${r.key})` },
      { data }
    )
  const who = r.scope === 'principal' ? `principal '${r.of ?? ''}'` : `anonymous clients at ${r.of ?? ''}`
  return new PlatformError(
    MCP_ERRORS.MCP_SESSION_QUOTA,
    {
      detail: `Too many sessions for ${who}: the limit is ${r.limit} live sessions (${r.key}); end one with DELETE or let it idle out`
    },
    { data }
  )
}
