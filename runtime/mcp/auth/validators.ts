import type { Platform } from '../../platform.js'
import { isObject } from '../types.js'

/** What a TokenValidator learns from an accepted bearer token. */
export interface TokenInfo {
  subject: string
  scopes: string[]
  roles?: string[]
  /** Epoch ms after which the token is no longer accepted (caches honour it). */
  expiresAt?: number
  via?: 'jwt' | 'validator'
}

/**
 * Checks a bearer token: TokenInfo when accepted, null (or a throw) when refused. May be async;
 * a synchronous validator also feeds the platform's principal resolver directly (write gate).
 */
export type TokenValidator = (token: string) => TokenInfo | null | Promise<TokenInfo | null>

/** A plugin's validator tool returns `{subject|sub, scopes|scope, roles?, expiresAt?}` or null/false. */
export function toTokenInfo(v: unknown): TokenInfo | null {
  if (!isObject(v)) return null
  const subject = typeof v.subject === 'string' ? v.subject : typeof v.sub === 'string' ? v.sub : undefined
  if (subject === undefined || subject === '' || v.active === false) return null
  const scopes = Array.isArray(v.scopes)
    ? v.scopes.filter((s): s is string => typeof s === 'string')
    : typeof v.scope === 'string'
      ? v.scope.split(' ').filter((s) => s !== '')
      : []
  const out: TokenInfo = { subject, scopes, via: 'validator' }
  if (Array.isArray(v.roles)) out.roles = v.roles.filter((s): s is string => typeof s === 'string')
  if (typeof v.expiresAt === 'number') out.expiresAt = v.expiresAt
  return out
}

/**
 * `<plugin>/<tool>`: a tool of a loaded plugin, called with `{token}` directly through the plugin
 * host (no MCP, no governance gate), so a validator works in every sandbox tier.
 */
export function pluginToolValidator(platform: Platform, ref: string): TokenValidator {
  const slash = ref.indexOf('/')
  const plugin = ref.slice(0, slash)
  const tool = ref.slice(slash + 1)
  return async (token) => {
    try {
      return toTokenInfo(await platform.plugins.invoke(plugin, 'tool', tool, { token }))
    } catch (err) {
      platform.logger.warn({ err, validator: ref }, 'token validator failed; token refused')
      return null
    }
  }
}
