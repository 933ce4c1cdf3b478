import type { Config, ConfigKeyOf } from '../config/index.js'
import type { EventBus } from '../events/index.js'
import type { Context } from '../http/index.js'
import { PlatformError, type ErrorDef } from '../contracts/index.js'
import { AUTH_ERRORS } from './errors.js'
import type { ControlAuditLog } from './audit-log.js'
import type { ControlAuthorizer } from './authorizer.js'
import type { Principal } from './principal.js'
import type { PrincipalResolver } from './resolver.js'

export interface WriteSurface {
  /** Feature flag re-read on every call. */
  flagKey: ConfigKeyOf<boolean>
  disabled: ErrorDef
  anonymous: ErrorDef
}

/** `platform.admin.required-role` that lets any authenticated principal write. */
export const ANY_ROLE = '*'

export const ADMIN_SURFACE: WriteSurface = {
  flagKey: 'platform.admin.http-write-enabled',
  disabled: AUTH_ERRORS.ADMIN_WRITE_DISABLED,
  anonymous: AUTH_ERRORS.ADMIN_AUTH_REQUIRED
}

/**
 * The four checks every mutating admin route runs, in this order: feature flag (403),
 * principal (401), optional role (403), ControlAuthorizer (403). Every outcome is audited:
 * `<action>.denied.flag|anonymous|role|authz`, or `<action>` through `done()`.
 */
export class WriteGate {
  constructor(
    private readonly config: Config,
    private readonly principals: PrincipalResolver,
    private readonly authorizer: ControlAuthorizer,
    private readonly audit: ControlAuditLog,
    private readonly bus: EventBus
  ) {}

  /** Returns the principal allowed to write, or throws the catalogue error after auditing it. */
  guard(ctx: Context, action: string, target: string, surface: WriteSurface = ADMIN_SURFACE): Principal {
    return this.guardPrincipal(this.principals.resolve(ctx), action, target, surface)
  }

  /** The same checks for a caller resolved elsewhere (an MCP request's principal). */
  guardPrincipal(
    principal: Principal | null,
    action: string,
    target: string,
    surface: WriteSurface = ADMIN_SURFACE
  ): Principal {
    if (this.config.get(surface.flagKey) !== true) this.deny(null, action, target, 'flag', surface.disabled)
    if (principal === null) this.deny(null, action, target, 'anonymous', surface.anonymous)
    // a role by default (`admin`): a token minted for something else (a CI job, a chat user) is no operator
    const role = this.config.get('platform.admin.required-role')
    if (role !== ANY_ROLE && !principal.roles.includes(role))
      this.deny(principal, action, target, 'role', AUTH_ERRORS.ADMIN_ROLE_REQUIRED)
    if (!this.authorizer(action, target, principal))
      this.deny(principal, action, target, 'authz', AUTH_ERRORS.ADMIN_FORBIDDEN)
    return principal
  }

  /** Audits the outcome of an allowed write and announces it on the bus. */
  done(principal: Principal, action: string, target: string, success: boolean, message = ''): Promise<void> {
    this.bus.emit('ControlActionExecuted', { principal: principal.name, action, target, success })
    return this.audit.record(principal.name, action, target, success, message)
  }

  private deny(principal: Principal | null, action: string, target: string, why: string, error: ErrorDef): never {
    const err = new PlatformError(error)
    void this.audit.record(principal?.name ?? null, `${action}.denied.${why}`, target, false, err.message)
    this.bus.emit('ControlActionExecuted', {
      principal: principal?.name ?? 'anonymous',
      action: `${action}.denied.${why}`,
      target,
      success: false
    })
    throw err
  }
}
