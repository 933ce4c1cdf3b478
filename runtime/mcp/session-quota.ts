import { addressBucket } from '../http/index.js'
import { ErrorCode, HttpStatus, rejection, type McpError } from './errors.js'

/** Who opened a session: its principal, or null and the client address for an anonymous caller. */
export interface SessionOwner {
  principal: string | null
  address?: string
}

/**
 * Who is asking, the way sessions are bound: its principal, or (anonymous) its client address.
 * A session answers only to the owner that opened it.
 */
export function callerOf(c: { principal?: string | null; address?: string }): SessionOwner {
  return { principal: c.principal ?? null, ...(c.address !== undefined ? { address: c.address } : {}) }
}

export interface SessionLimits {
  /** Most live sessions in all. */
  max: number
  /** Most live sessions of one authenticated principal. */
  perPrincipal: number
  /** Most live anonymous sessions from one client address. */
  perAddress: number
  /** Sessions of `max` anonymous callers cannot take: kept for authenticated principals. */
  reserve: number
}

/** Why a session was refused, and the configured limit that refused it. */
export interface SessionRefusal {
  scope: 'server' | 'anonymous' | 'principal' | 'address'
  limit: number
  key: string
  /** The principal or the address the limit counted (absent for the server-wide cap). */
  of?: string
}

const KEYS = {
  server: 'platform.mcp.max-sessions',
  principal: 'platform.mcp.sessions.max-per-principal',
  address: 'platform.mcp.sessions.max-per-address',
  anonymous: 'platform.mcp.sessions.authenticated-reserve'
} as const

/**
 * Live-session counts per principal and per client address. An authenticated caller is counted
 * by its principal (it is accountable whatever address it comes from); an anonymous one by its
 * address, so one anonymous client cannot fill the server-wide cap alone.
 */
export class SessionQuota {
  private readonly byPrincipal = new Map<string, number>()
  private readonly byAddress = new Map<string, number>()

  constructor(readonly limits: SessionLimits) {}

  /** The refusal for a new session of this owner, or undefined when it fits its own limit. */
  check(owner: SessionOwner): SessionRefusal | undefined {
    if (owner.principal !== null) {
      if ((this.byPrincipal.get(owner.principal) ?? 0) >= this.limits.perPrincipal)
        return this.refusal('principal', owner.principal)
    } else if (owner.address !== undefined) {
      const bucket = addressBucket(owner.address)
      if ((this.byAddress.get(bucket) ?? 0) >= this.limits.perAddress) return this.refusal('address', bucket)
    }
    return undefined
  }

  refusal(scope: SessionRefusal['scope'], of?: string): SessionRefusal {
    const l = this.limits
    const limit = {
      server: l.max,
      anonymous: Math.max(0, l.max - l.reserve),
      principal: l.perPrincipal,
      address: l.perAddress
    }[scope]
    return of === undefined ? { scope, limit, key: KEYS[scope] } : { scope, limit, key: KEYS[scope], of }
  }

  add(owner: SessionOwner): void {
    this.bump(owner, 1)
  }
  remove(owner: SessionOwner): void {
    this.bump(owner, -1)
  }

  private bump(owner: SessionOwner, by: number): void {
    const [map, k] =
      owner.principal !== null
        ? [this.byPrincipal, owner.principal]
        : [this.byAddress, owner.address === undefined ? undefined : addressBucket(owner.address)]
    if (k === undefined) return
    const n = (map.get(k) ?? 0) + by
    if (n <= 0) map.delete(k)
    else map.set(k, n)
  }
}

/** The JSON-RPC error of a refusal: HTTP 429 for a per-caller limit, 503 for the server cap and the anonymous pool. */
export function refusalError(r: SessionRefusal): McpError {
  const data = { limit: r.limit, key: r.key }
  if (r.scope === 'anonymous')
    return rejection(
      ErrorCode.ServerError,
      `Too many anonymous sessions: anonymous callers hold their limit of ${r.limit} live sessions; the rest of platform.mcp.max-sessions is kept for authenticated principals (${r.key})`,
      HttpStatus.Unavailable,
      data
    )
  if (r.scope === 'server')
    return rejection(
      ErrorCode.ServerError,
      `Too many sessions: the server holds its limit of ${r.limit} live sessions (${r.key})`,
      HttpStatus.Unavailable,
      data
    )
  const who = r.scope === 'principal' ? `principal '${r.of ?? ''}'` : `anonymous clients at ${r.of ?? ''}`
  return rejection(
    ErrorCode.ServerError,
    `Too many sessions for ${who}: the limit is ${r.limit} live sessions (${r.key}); end one with DELETE or let it idle out`,
    HttpStatus.TooManyRequests,
    data
  )
}
