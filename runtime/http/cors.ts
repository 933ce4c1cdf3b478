import type { Context } from './context.js'
import { PlatformError } from '../contracts/index.js'
import { HTTP_ERRORS } from './errors.js'

const EXPOSE =
  'X-Request-Id, Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Location, Retry-After, X-Platform-Resource, X-Platform-Token, X-Next-Cursor, Link, Idempotent-Replayed, X-Anonymous-Denied, X-Anonymous-Denied-Dropped'

/** The CORS policy of `platform.server.cors-origins`: response headers and preflight answers. */
export class Cors {
  private readonly any: boolean
  private readonly origins: Set<string>

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*')
    this.origins = new Set(origins)
  }

  /** The headers an allowed origin's response carries; undefined when CORS is off or the origin is not allowed. */
  headers(ctx: Context): [string, string][] | undefined {
    if (this.origins.size === 0) return undefined
    const origin = ctx.header('origin')
    if (origin === undefined || !(this.any || this.origins.has(origin))) return undefined
    return [
      ['access-control-allow-origin', this.any ? '*' : origin],
      ['vary', 'Origin'],
      ['access-control-expose-headers', EXPOSE]
    ]
  }

  /** Answers an OPTIONS request to a route whose methods are `allow`. */
  preflight(ctx: Context, allow: string): void {
    const origin = ctx.header('origin')
    ctx.setHeader('allow', allow)
    if (origin !== undefined && this.origins.size > 0) {
      if (!(this.any || this.origins.has(origin))) {
        ctx.error(new PlatformError(HTTP_ERRORS.CORS_ORIGIN_DENIED, { origin }))
        return
      }
      ctx.setHeader('access-control-allow-methods', allow)
      ctx.setHeader(
        'access-control-allow-headers',
        ctx.header('access-control-request-headers') ?? 'content-type, authorization'
      )
      ctx.setHeader('access-control-max-age', '600')
    }
    ctx.empty(204)
  }
}
