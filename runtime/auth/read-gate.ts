import type { Config } from '../config/index.js'
import { type Context } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Principal } from './principal.js'
import type { PrincipalResolver } from './resolver.js'
import { AUTH_ERRORS } from './errors.js'

/**
 * Which admin reads need a principal: `open` reads only under `http-read-auth-required`; `content`
 * reads (decisions, audit, journal, conversations) and `workspace` reads also under their own
 * flags, both true by default. `operator` reads show what many principals own (the webhook
 * outbox names every client's receivers): a principal with `platform.admin.required-role`, whatever
 * the flags say.
 */
export type ReadKind = 'open' | 'content' | 'workspace' | 'operator'

/** The read gate of the admin surface; the refusal's hint names the flag that refused. */
export class ReadGate {
  constructor(
    private readonly config: Config,
    private readonly principals: PrincipalResolver
  ) {}

  check(ctx: Context, kind: ReadKind): void {
    if (kind === 'operator') this.operator(this.principals.resolve(ctx))
    else this.refuse(kind, () => this.principals.resolve(ctx) !== null)
  }

  /** Whether `ctx` may read `kind` (for a route that shows more to those who may). */
  admits(ctx: Context, kind: ReadKind): boolean {
    try {
      this.check(ctx, kind)
      return true
    } catch {
      return false
    }
  }

  /** The same gate for a caller resolved elsewhere (a stream's upgrade, an MCP request). */
  checkPrincipal(principal: Principal | null, kind: ReadKind): void {
    if (kind === 'operator') this.operator(principal)
    else this.refuse(kind, () => principal !== null)
  }

  private operator(principal: Principal | null): void {
    if (principal === null) throw new PlatformError(AUTH_ERRORS.ADMIN_OPERATOR_READ_AUTH_REQUIRED)
    const role = this.config.get('platform.admin.required-role')
    if (role !== '*' && !principal.roles.includes(role)) throw new PlatformError(AUTH_ERRORS.ADMIN_ROLE_REQUIRED)
  }

  private refuse(kind: ReadKind, hasPrincipal: () => boolean): void {
    const all = this.config.get('platform.admin.http-read-auth-required')
    const own =
      kind === 'content'
        ? this.config.get('platform.admin.content-read-auth-required')
        : kind === 'workspace'
          ? this.config.get('platform.admin.workspace-read-auth-required')
          : false
    if (!all && !own) return
    if (hasPrincipal()) return
    // with every read gated, lifting only the content flag would not help: name the one that would
    if (all) throw new PlatformError(AUTH_ERRORS.ADMIN_READ_AUTH_REQUIRED)
    throw new PlatformError(
      kind === 'content' ? AUTH_ERRORS.ADMIN_CONTENT_READ_AUTH_REQUIRED : AUTH_ERRORS.ADMIN_WORKSPACE_READ_AUTH_REQUIRED
    )
  }
}
