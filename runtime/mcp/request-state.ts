import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'

/** What an input-required round carries to the next one; signed, so a client can read but never alter it. */
export interface StatePayload {
  /** method and target the state is bound to */
  m: string
  n: string
  /** principal bound to the state (null when anonymous) */
  p: string | null
  /** expiry, epoch ms */
  e: number
  /** the tool's own state, opaque to us */
  s?: unknown
  /** responses gathered in earlier rounds */
  r?: Record<string, unknown>
}

/**
 * Integrity protection for `requestState` (SEP-2322: attacker-controlled, MUST be protected when it
 * affects logic): base64url(JSON) + "." + HMAC-SHA256 under a server key. Bound to method, target,
 * principal and a TTL; anything that fails verification is rejected, never trusted.
 */
export class RequestStateCodec {
  constructor(
    private readonly key: Buffer,
    private readonly ttlMs: number
  ) {}

  static newKey(): Buffer {
    return randomBytes(32)
  }

  sign(p: Omit<StatePayload, 'e'>): string {
    const body = Buffer.from(JSON.stringify({ ...p, e: Date.now() + this.ttlMs })).toString('base64url')
    return `${body}.${this.mac(body)}`
  }

  verify(state: unknown, method: string, target: string, principal: string | null): StatePayload {
    if (typeof state !== 'string')
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Invalid requestState: must be a string' })
    const dot = state.indexOf('.')
    const body = dot > 0 ? state.slice(0, dot) : ''
    const mac = dot > 0 ? state.slice(dot + 1) : ''
    const want = Buffer.from(this.mac(body))
    const got = Buffer.from(mac)
    if (body === '' || want.length !== got.length || !timingSafeEqual(want, got))
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Invalid requestState: integrity check failed' })
    let p: StatePayload
    try {
      p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as StatePayload
    } catch {
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Invalid requestState: integrity check failed' })
    }
    if (p.m !== method || p.n !== target)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, {
        detail: 'Invalid requestState: issued for another request'
      })
    if (p.p !== principal)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, {
        detail: 'Invalid requestState: issued to another principal'
      })
    if (p.e < Date.now())
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Invalid requestState: expired' })
    return p
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url')
  }
}
