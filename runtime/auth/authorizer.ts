import type { Principal } from './principal.js'

/** Decides whether `principal` may perform `action` on `target`. */
export type ControlAuthorizer = (action: string, target: string, principal: Principal | null) => boolean

export const DENY_ALL: ControlAuthorizer = () => false
export const ALLOW_ALL: ControlAuthorizer = () => true
export const REQUIRE_PRINCIPAL: ControlAuthorizer = (_a, _t, p) => p !== null && p.name.trim() !== ''

/**
 * Role-based: `rules[action]` (or `rules['*']`) lists the roles allowed to perform it. An action
 * with no rule is denied (fail closed).
 */
export function roleBased(rules: Readonly<Record<string, readonly string[]>>): ControlAuthorizer {
  return (action, _target, p) => {
    if (p === null) return false
    const allowed = rules[action] ?? rules['*']
    return allowed !== undefined && p.roles.some((r) => allowed.includes(r))
  }
}

/** The authorizer the configuration asks for; the server's default is REQUIRE_PRINCIPAL. */
export function authorizerFromConfig(
  kind: string | undefined,
  requirePrincipal: boolean,
  roles: Readonly<Record<string, readonly string[]>>
): ControlAuthorizer {
  switch (kind) {
    case 'deny-all':
      return DENY_ALL
    case 'allow-all':
      return ALLOW_ALL
    case 'require-principal':
      return REQUIRE_PRINCIPAL
    case 'roles':
      return roleBased(roles)
    default:
      return requirePrincipal ? REQUIRE_PRINCIPAL : DENY_ALL
  }
}
