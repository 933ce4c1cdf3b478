import type { Context } from '../http/index.js'
import { TokenResolver, type Principal } from './principal.js'

/** Something that turns a request into a principal: JWT validation, a plugin's TokenValidator. */
export type PrincipalSource = (headers: Readonly<Record<string, string>>) => Principal | null

/**
 * The one principal resolver of the platform: configured tokens first, then registered sources (JWT,
 * plugin validators). The result is cached on the request.
 */
export class PrincipalResolver {
  private readonly sources: PrincipalSource[] = []

  constructor(readonly tokens: TokenResolver) {}

  addSource(source: PrincipalSource): () => void {
    this.sources.push(source)
    return () => {
      const i = this.sources.indexOf(source)
      if (i >= 0) this.sources.splice(i, 1)
    }
  }

  resolve(ctx: Context): Principal | null {
    if ('principal' in ctx.state) return ctx.state.principal as Principal | null
    const p = this.fromHeaders(ctx.headers)
    ctx.state.principal = p
    return p
  }

  /** The same resolution from bare headers (a WebSocket upgrade or message has no Context to cache on). */
  fromHeaders(headers: Readonly<Record<string, string>>): Principal | null {
    let p = this.tokens.resolve(headers)
    for (let i = 0; p === null && i < this.sources.length; i++) {
      try {
        p = this.sources[i]!(headers)
      } catch {
        p = null
      }
    }
    return p
  }
}
