import type { Platform } from '../../platform.js'
import type { Context } from '../../http/index.js'
import { PRINCIPAL_SOURCES, type Principal } from '../../auth/index.js'
import { PlatformError, isPlatformError } from '../../contracts/index.js'
import { ErrorCode, MCP_ERRORS } from '../errors.js'
import { MCP_BEFORE_DISPATCH, MCP_HTTP_GUARDS, MCP_TOKEN_VALIDATORS } from '../key.js'
import { JwtValidator, type JwtOptions } from './jwt.js'
import { pluginToolValidator, type TokenInfo, type TokenValidator } from './validators.js'

const WELL_KNOWN = '/.well-known/oauth-protected-resource'
const UNAUTHORIZED = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: ErrorCode.SessionNotFound, message: 'Unauthorized' }
})
const FORBIDDEN = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: ErrorCode.SessionNotFound, message: 'Forbidden: insufficient scope' }
})
const CACHE_MAX = 10_000
const CACHE_MS = 60_000

/** The bearer token of `Authorization: Bearer` (the only bearer method the metadata advertises). */
export function bearerOf(headers: Readonly<Record<string, string>>): string | undefined {
  const a = headers.authorization
  if (a === undefined || a.length <= 7 || a.slice(0, 7).toLowerCase() !== 'bearer ') return undefined
  const t = a.slice(7).trim()
  return t === '' ? undefined : t
}

function list(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string' && s !== '')
  return typeof v === 'string' ? v.split(/[\s,]+/).filter((s) => s !== '') : []
}

export type AuthOutcome = { ok: true; info: TokenInfo } | { ok: false; status: 401 | 403; header: string; body: string }

/**
 * The OAuth 2.0 resource server of the MCP endpoints (MCP authorization, RFC 9728, RFC 6750):
 * protected-resource metadata, 401 challenges pointing at it, bearer tokens checked by a
 * TokenValidator, and the configured scopes required on every request (403 insufficient_scope).
 */
export class McpAuth {
  readonly metadataUrl: string
  /** Where the metadata is served: the root well-known path and, for a resource with a path, RFC 9728 §3.1's. */
  readonly metadataPaths: string[]
  private readonly cache = new Map<string, TokenInfo>()
  private readonly scopeParam: string

  constructor(
    readonly resource: string,
    readonly authorizationServers: string[],
    readonly scopes: string[],
    private readonly validator: TokenValidator,
    private readonly syncValidator?: (token: string) => TokenInfo | null
  ) {
    let u: URL
    try {
      u = new URL(resource)
    } catch {
      throw new Error(`org.platform.mcp.auth.resource must be a URL; got '${resource}'`)
    }
    if (u.hash !== '') throw new Error('org.platform.mcp.auth.resource must not have a fragment (RFC 9728 §1.2)')
    if (authorizationServers.length === 0)
      throw new Error(
        'org.platform.mcp.auth.authorizationServers must list at least one authorization server (MCP authorization §2.3)'
      )
    const path = u.pathname.replace(/\/+$/, '')
    this.metadataUrl = `${u.origin}${WELL_KNOWN}${path}`
    this.metadataPaths = path === '' ? [WELL_KNOWN] : [WELL_KNOWN, `${WELL_KNOWN}${path}`]
    this.scopeParam = scopes.length > 0 ? `, scope="${scopes.join(' ')}"` : ''
  }

  /** RFC 9728 §2: parameters with no value are omitted. */
  metadata(): Record<string, unknown> {
    const out: Record<string, unknown> = {
      resource: this.resource,
      authorization_servers: this.authorizationServers,
      bearer_methods_supported: ['header']
    }
    if (this.scopes.length > 0) out.scopes_supported = this.scopes
    return out
  }

  /** A token already accepted and not yet expired, or one a synchronous validator accepts now. */
  known(token: string, now = Date.now()): TokenInfo | null {
    const hit = this.cache.get(token)
    if (hit !== undefined) {
      if ((hit.expiresAt ?? Infinity) > now) return hit
      this.cache.delete(token)
    }
    if (this.syncValidator === undefined) return null
    const info = this.syncValidator(token)
    if (info !== null) this.remember(token, info, now)
    return info
  }

  private remember(token: string, info: TokenInfo, now: number): void {
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(token, { ...info, expiresAt: Math.min(info.expiresAt ?? Infinity, now + CACHE_MS) })
  }

  async check(token: string | undefined): Promise<AuthOutcome> {
    if (token === undefined)
      return {
        ok: false,
        status: 401,
        header: `Bearer resource_metadata="${this.metadataUrl}"${this.scopeParam}`,
        body: UNAUTHORIZED
      }
    const now = Date.now()
    let info = this.known(token, now)
    if (info === null && this.syncValidator === undefined) {
      try {
        info = await this.validator(token)
      } catch {
        info = null
      }
      if (info !== null) this.remember(token, info, now)
    }
    if (info === null)
      return {
        ok: false,
        status: 401,
        header: `Bearer resource_metadata="${this.metadataUrl}"${this.scopeParam}, error="invalid_token"`,
        body: UNAUTHORIZED
      }
    for (const s of this.scopes) {
      if (!info.scopes.includes(s))
        return {
          ok: false,
          status: 403,
          header: `Bearer error="insufficient_scope"${this.scopeParam}, resource_metadata="${this.metadataUrl}"`,
          body: FORBIDDEN
        }
    }
    return { ok: true, info }
  }
}

function principalOf(info: TokenInfo): Principal {
  return Object.freeze({
    name: info.subject,
    roles: Object.freeze([...(info.roles ?? [])]),
    via: info.via ?? 'validator'
  })
}

function jwtOptions(platform: Platform): JwtOptions | undefined {
  const c = platform.config
  const keys = c.get('org.platform.auth.jwt.keys') ?? []
  const jwksFile = c.get('org.platform.auth.jwt.jwksFile')
  if (keys.length === 0 && jwksFile === undefined) return undefined
  const audience = c.get('org.platform.auth.jwt.audience') ?? c.get('org.platform.mcp.auth.resource')
  const opts: JwtOptions = {
    keys: keys as JwtOptions['keys'],
    algorithms: c.get('org.platform.auth.jwt.algorithms'),
    clockToleranceSeconds: c.get('org.platform.auth.jwt.clockToleranceSeconds')
  }
  if (jwksFile !== undefined) opts.jwksFile = jwksFile
  const issuer = c.get('org.platform.auth.jwt.issuer')
  if (issuer !== undefined) opts.issuer = issuer
  if (audience !== undefined) opts.audience = audience
  return opts
}

/**
 * Installs JWT principals (whenever JWT keys are configured, so the write gate sees them) and, when
 * `org.platform.mcp.auth.resource` is set, the OAuth resource server in front of every MCP endpoint.
 */
export function installMcpAuth(platform: Platform): McpAuth | undefined {
  const c = platform.config
  const log = platform.logger.child({ area: 'mcp-auth' })
  const jwtOpts = jwtOptions(platform)
  const jwt = jwtOpts !== undefined ? new JwtValidator(jwtOpts) : undefined
  if (jwtOpts !== undefined && jwtOpts.audience === undefined)
    log.warn(
      'JWTs are accepted for any audience: set org.platform.auth.jwt.audience (or org.platform.mcp.auth.resource)'
    )
  const jwtSync =
    jwt === undefined
      ? undefined
      : (token: string): TokenInfo | null => {
          try {
            return jwt.verify(token)
          } catch (err) {
            if (isPlatformError(err, MCP_ERRORS.MCP_JWT_INVALID)) {
              log.debug({ reason: err.message }, 'JWT refused')
              return null
            }
            throw err
          }
        }
  const resource = c.get('org.platform.mcp.auth.resource')
  const name = c.get('org.platform.auth.tokenValidator') ?? 'jwt'
  let auth: McpAuth | undefined
  if (resource !== undefined) {
    let validator: TokenValidator
    let sync: ((t: string) => TokenInfo | null) | undefined
    if (name === 'jwt') {
      if (jwtSync === undefined)
        throw new Error(
          'MCP authorization is on (org.platform.mcp.auth.resource) with the jwt validator, but no keys: set org.platform.auth.jwt.keys or org.platform.auth.jwt.jwksFile, or name another org.platform.auth.tokenValidator'
        )
      validator = jwtSync
      sync = jwtSync
    } else {
      const registered = platform.extensions(MCP_TOKEN_VALIDATORS).findLast((v) => v.name === name)?.validate
      if (registered !== undefined) validator = registered
      else if (/^[^/]+\/[^/]+$/.test(name)) validator = pluginToolValidator(platform, name)
      else
        throw new Error(
          `org.platform.auth.tokenValidator '${name}' is neither 'jwt', a validator registered in code, nor '<plugin>/<tool>'`
        )
    }
    auth = new McpAuth(
      resource,
      list(c.get('org.platform.mcp.auth.authorizationServers')),
      list(c.get('org.platform.mcp.auth.scopes')),
      validator,
      sync
    )
    const doc = JSON.stringify(auth.metadata())
    for (const p of auth.metadataPaths)
      platform.http.get(p, (ctx: Context) => {
        ctx.send(200, doc, 'application/json')
      })
    const a = auth
    const deny = (ctx: Context, out: Exclude<AuthOutcome, { ok: true }>): false => {
      ctx.setHeader('www-authenticate', out.header)
      ctx.send(out.status, out.body, 'application/json')
      return false
    }
    platform.extend(MCP_HTTP_GUARDS, async (ctx) => {
      const token = bearerOf(ctx.headers)
      const out = token !== undefined ? a.known(token) : null
      if (out !== null && a.scopes.every((s) => out.scopes.includes(s))) {
        ctx.state.principal = principalOf(out)
        return true
      }
      const checked = await a.check(token)
      if (!checked.ok) return deny(ctx, checked)
      ctx.state.principal = principalOf(checked.info)
      return true
    })
    // WebSocket: the upgrade's bearer token, checked per message (a token may expire mid-connection)
    platform.extend(MCP_BEFORE_DISPATCH, async (_msg, ctx) => {
      if (ctx.transport !== 'ws') return
      const checked = await a.check(ctx.bearer)
      if (!checked.ok)
        throw new PlatformError(
          checked.status === 401 ? MCP_ERRORS.MCP_UNAUTHORIZED : MCP_ERRORS.MCP_FORBIDDEN,
          {},
          { status: checked.status, headers: { 'www-authenticate': checked.header } }
        )
      ctx.principal = checked.info.subject
      ctx.caller = principalOf(checked.info)
    })
    log.info({ resource, validator: name }, 'MCP authorization on')
  }
  // JWT principals reach the write gate (and every resolver user), with or without MCP auth
  if (jwtSync !== undefined || auth !== undefined) {
    const a = auth
    platform.extend(PRINCIPAL_SOURCES, (headers) => {
      const t = bearerOf(headers)
      if (t === undefined) return null
      const info = a?.known(t) ?? jwtSync?.(t) ?? null
      return info === null ? null : principalOf(info)
    })
  }
  return auth
}
