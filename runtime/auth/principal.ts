import { createHash, timingSafeEqual } from 'node:crypto'

export interface Principal {
  readonly name: string
  readonly roles: readonly string[]
  /** How it was established: a configured token, a JWT, a plugin validator, the demo setting. */
  readonly via: 'token' | 'jwt' | 'validator' | 'demo'
}

export interface TokenConfig {
  token?: string
  sha256?: string
  principal: string
  roles?: readonly string[]
}

interface Entry {
  digest: Buffer
  principal: Principal
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/**
 * Resolves a principal from configured API tokens, sent as `Authorization: Bearer <t>` or
 * `X-Platform-Auth: <t>`. Tokens are compared as SHA-256 digests with timingSafeEqual, across every
 * entry (no early exit), so neither content nor position leaks through timing.
 */
export class TokenResolver {
  private readonly entries: Entry[]

  constructor(tokens: readonly TokenConfig[]) {
    this.entries = tokens.map((t) => ({
      digest: t.sha256 !== undefined ? Buffer.from(t.sha256, 'hex') : sha256(t.token!),
      principal: Object.freeze({ name: t.principal, roles: Object.freeze([...(t.roles ?? [])]), via: 'token' as const })
    }))
  }

  get size(): number {
    return this.entries.length
  }

  resolve(headers: Readonly<Record<string, string>>): Principal | null {
    const presented = tokenOf(headers)
    if (presented === undefined || this.entries.length === 0) return null
    const d = sha256(presented)
    let found: Principal | null = null
    for (const e of this.entries) if (timingSafeEqual(d, e.digest) && found === null) found = e.principal
    return found
  }
}

/** The bearer token of a request, from `Authorization: Bearer` or `X-Platform-Auth`. */
export function tokenOf(headers: Readonly<Record<string, string>>): string | undefined {
  const auth = headers.authorization
  if (auth !== undefined && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') return auth.slice(7).trim()
  const x = headers['x-platform-auth']
  return x !== undefined && x !== '' ? x : undefined
}
