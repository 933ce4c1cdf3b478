import type { Context } from '../http/index.js'
import { CORE, ExtensionPoint } from '../contracts/index.js'
import { TokenResolver, type Principal } from './principal.js'

/** Something that turns a request into a principal: JWT validation, a plugin's TokenValidator. */
export type PrincipalSource = (headers: Readonly<Record<string, string>>) => Principal | null

/**
 * Where an area adds a way to tell who sends a request (the MCP extras add JWTs): the core
 * declares it because every reader of principals (the gates, rooms, interactions) goes through
 * the one resolver. Asked in the order added, after the configured tokens.
 */
export const PRINCIPAL_SOURCES = new ExtensionPoint<PrincipalSource>(CORE, 'principal-sources')

const NO_SOURCES = (): readonly PrincipalSource[] => []

/**
 * The one principal resolver of the platform: configured tokens first, then the sources added at
 * PRINCIPAL_SOURCES (JWT, plugin validators), read on every resolution. The result is cached on
 * the request.
 */
export class PrincipalResolver {
  constructor(
    readonly tokens: TokenResolver,
    private readonly sources: () => readonly PrincipalSource[] = NO_SOURCES
  ) {}

  resolve(ctx: Context): Principal | null {
    if ('principal' in ctx.state) return ctx.state.principal as Principal | null
    const p = this.fromHeaders(ctx.headers)
    ctx.state.principal = p
    return p
  }

  /** The same resolution from bare headers (a WebSocket upgrade or message has no Context to cache on). */
  fromHeaders(headers: Readonly<Record<string, string>>): Principal | null {
    let p = this.tokens.resolve(headers)
    const sources = p === null ? this.sources() : []
    for (let i = 0; p === null && i < sources.length; i++) {
      try {
        p = sources[i]!(headers)
      } catch {
        p = null
      }
    }
    return p
  }
}
