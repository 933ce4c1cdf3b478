export { TokenResolver, tokenOf, type Principal, type TokenConfig } from './principal.js'
export { PrincipalResolver, type PrincipalSource } from './resolver.js'
export {
  DENY_ALL,
  ALLOW_ALL,
  REQUIRE_PRINCIPAL,
  roleBased,
  authorizerFromConfig,
  type ControlAuthorizer
} from './authorizer.js'
export { ControlAuditLog } from './audit-log.js'
export { WriteGate, ADMIN_SURFACE, type WriteSurface } from './write-gate.js'
export { ReadGate, type ReadKind } from './read-gate.js'
export { AUTH_ERRORS } from './errors.js'
