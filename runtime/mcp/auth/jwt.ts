import {
  createHmac,
  createPublicKey,
  createSecretKey,
  timingSafeEqual,
  verify,
  constants,
  type KeyObject,
  type JsonWebKey
} from 'node:crypto'
import { readFileSync } from 'node:fs'
import { PlatformError } from '../../contracts/index.js'
import { MCP_ERRORS } from '../errors.js'
import type { TokenInfo } from './validators.js'

interface AlgDef {
  hash: string | null
  kind: 'rsa' | 'rsa-pss' | 'ec' | 'okp' | 'hmac'
  curve?: string
  saltLength?: number
}

const ALGS: Record<string, AlgDef> = {
  RS256: { hash: 'sha256', kind: 'rsa' },
  RS384: { hash: 'sha384', kind: 'rsa' },
  RS512: { hash: 'sha512', kind: 'rsa' },
  PS256: { hash: 'sha256', kind: 'rsa-pss', saltLength: 32 },
  PS384: { hash: 'sha384', kind: 'rsa-pss', saltLength: 48 },
  PS512: { hash: 'sha512', kind: 'rsa-pss', saltLength: 64 },
  ES256: { hash: 'sha256', kind: 'ec', curve: 'prime256v1' },
  ES384: { hash: 'sha384', kind: 'ec', curve: 'secp384r1' },
  ES512: { hash: 'sha512', kind: 'ec', curve: 'secp521r1' },
  EdDSA: { hash: null, kind: 'okp' },
  Ed25519: { hash: null, kind: 'okp' },
  HS256: { hash: 'sha256', kind: 'hmac' },
  HS384: { hash: 'sha384', kind: 'hmac' },
  HS512: { hash: 'sha512', kind: 'hmac' }
}

interface Key {
  kid?: string
  alg?: string
  key: KeyObject
  kind: AlgDef['kind']
  curve?: string
}

export interface JwtOptions {
  /** PEM public keys or JWKs. */
  keys?: readonly (string | JsonWebKey)[]
  /** A JWKS file (`{"keys": [...]}`). */
  jwksFile?: string
  issuer?: string
  audience?: string | readonly string[]
  algorithms: readonly string[]
  clockToleranceSeconds: number
}

function kindOf(k: KeyObject): { kind: AlgDef['kind']; curve?: string } {
  if (k.type === 'secret') return { kind: 'hmac' }
  switch (k.asymmetricKeyType) {
    case 'rsa':
      return { kind: 'rsa' }
    case 'rsa-pss':
      return { kind: 'rsa-pss' }
    case 'ec':
      return { kind: 'ec', curve: k.asymmetricKeyDetails?.namedCurve ?? '' }
    case 'ed25519':
    case 'ed448':
      return { kind: 'okp' }
    default:
      throw new Error(`unsupported key type ${String(k.asymmetricKeyType)}`)
  }
}

function importKey(k: string | JsonWebKey): Key | undefined {
  if (typeof k === 'string') {
    const key = k.includes('-----BEGIN') ? createPublicKey(k) : createSecretKey(Buffer.from(k, 'utf8'))
    return { key, ...kindOf(key) }
  }
  if (k.use === 'enc') return undefined
  const key =
    k.kty === 'oct'
      ? createSecretKey(Buffer.from(String(k.k ?? ''), 'base64url'))
      : createPublicKey({ key: k, format: 'jwk' })
  const out: Key = { key, ...kindOf(key) }
  if (typeof k.kid === 'string') out.kid = k.kid
  if (typeof k.alg === 'string') out.alg = k.alg
  return out
}

/** Loads every configured key once; a bad key stops start-up with a message naming it. */
export function loadKeys(opts: Pick<JwtOptions, 'keys' | 'jwksFile'>): Key[] {
  const raw: (string | JsonWebKey)[] = [...(opts.keys ?? [])]
  if (opts.jwksFile !== undefined) {
    let doc: unknown
    try {
      doc = JSON.parse(readFileSync(opts.jwksFile, 'utf8'))
    } catch (err) {
      throw new Error(`org.platform.auth.jwt.jwksFile ${opts.jwksFile}: ${(err as Error).message}`, { cause: err })
    }
    const keys = (doc as { keys?: unknown })?.keys
    if (!Array.isArray(keys))
      throw new Error(`org.platform.auth.jwt.jwksFile ${opts.jwksFile}: expected {"keys": [...]}`)
    raw.push(...(keys as JsonWebKey[]))
  }
  const out: Key[] = []
  raw.forEach((k, i) => {
    try {
      const key = importKey(k)
      if (key !== undefined) out.push(key)
    } catch (err) {
      throw new Error(`JWT key #${i + 1}: ${(err as Error).message}`, { cause: err })
    }
  })
  return out
}

const B64URL = /^[A-Za-z0-9_-]*$/

/**
 * A base64url segment of the token as JSON. Node's decoder skips a dangling last character where
 * a strict one refuses it: a length of 4n+1 is never valid base64url, so it is refused here.
 */
function parseJson(part: string, what: string): Record<string, unknown> {
  let v: unknown
  try {
    if (part.length % 4 === 1) throw new Error('truncated base64url')
    v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
  } catch {
    throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: `malformed ${what}` })
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: `${what} is not a JSON object` })
  return v as Record<string, unknown>
}

/**
 * The built-in TokenValidator: JWT access tokens checked against configured keys or a JWKS file.
 * Verification is synchronous (node:crypto), because the platform's principal resolver, which the
 * write gate uses, is synchronous (jose, async and WebCrypto, mints the tokens in the tests).
 */
export class JwtValidator {
  private readonly keys: Key[]
  private readonly audiences: readonly string[] | undefined
  private readonly algorithms: Set<string>

  constructor(private readonly opts: JwtOptions) {
    this.keys = loadKeys(opts)
    if (this.keys.length === 0)
      throw new Error('the JWT validator needs keys: set org.platform.auth.jwt.keys or org.platform.auth.jwt.jwksFile')
    this.audiences =
      opts.audience === undefined ? undefined : typeof opts.audience === 'string' ? [opts.audience] : opts.audience
    for (const a of opts.algorithms)
      if (ALGS[a] === undefined) throw new Error(`org.platform.auth.jwt.algorithms: unsupported algorithm '${a}'`)
    this.algorithms = new Set(opts.algorithms)
  }

  /** The token's subject and scopes, or MCP_JWT_INVALID saying why it is refused. */
  verify(token: string, now = Date.now()): TokenInfo {
    const parts = token.split('.')
    if (
      parts.length !== 3 ||
      !parts.every((p) => B64URL.test(p)) ||
      parts[0] === '' ||
      parts[1] === '' ||
      parts[2] === ''
    )
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'not a compact JWS' })
    let header
    try {
      header = parseJson(parts[0]!, 'header')
    } catch {
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'malformed header' })
    }
    const alg = header.alg
    if (typeof alg !== 'string' || !this.algorithms.has(alg))
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: `algorithm ${String(alg)} not accepted` })
    if (header.crit !== undefined)
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'unsupported crit header' })
    const def = ALGS[alg]!
    const input = Buffer.from(`${parts[0]!}.${parts[1]!}`, 'ascii')
    const sig = Buffer.from(parts[2]!, 'base64url')
    let ok = false
    for (const k of this.keys) {
      if (header.kid !== undefined && k.kid !== undefined && k.kid !== header.kid) continue
      if (k.alg !== undefined && k.alg !== alg) continue
      if (k.kind !== def.kind && !(def.kind === 'rsa-pss' && k.kind === 'rsa')) continue
      if (def.curve !== undefined && k.curve !== def.curve) continue
      if (def.kind === 'hmac') {
        const mac = createHmac(def.hash!, k.key).update(input).digest()
        ok = mac.length === sig.length && timingSafeEqual(mac, sig)
      } else {
        const opts =
          def.kind === 'rsa-pss'
            ? { key: k.key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: def.saltLength! }
            : def.kind === 'ec'
              ? { key: k.key, dsaEncoding: 'ieee-p1363' as const }
              : { key: k.key }
        try {
          ok = verify(def.hash, input, opts, sig)
        } catch {
          ok = false
        }
      }
      if (ok) break
    }
    if (!ok) throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'signature verification failed' })
    const claims = parseJson(parts[1]!, 'payload')
    const skew = this.opts.clockToleranceSeconds
    const nowS = Math.floor(now / 1000)
    if (typeof claims.exp !== 'number')
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'exp claim missing' })
    if (nowS - skew >= claims.exp) throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'token expired' })
    if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || nowS + skew < claims.nbf))
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'token not yet valid' })
    if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat > nowS + skew))
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'iat in the future' })
    if (this.opts.issuer !== undefined && claims.iss !== this.opts.issuer)
      throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'unexpected issuer' })
    if (this.audiences !== undefined) {
      const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : []
      if (!aud.some((a) => this.audiences!.includes(a as string)))
        throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'unexpected audience' })
    }
    const subject =
      typeof claims.sub === 'string' && claims.sub !== ''
        ? claims.sub
        : typeof claims.client_id === 'string'
          ? claims.client_id
          : undefined
    if (subject === undefined) throw new PlatformError(MCP_ERRORS.MCP_JWT_INVALID, { detail: 'sub claim missing' })
    const scopes =
      typeof claims.scope === 'string'
        ? claims.scope.split(' ').filter((s) => s !== '')
        : Array.isArray(claims.scp)
          ? claims.scp.filter((s): s is string => typeof s === 'string')
          : typeof claims.scp === 'string'
            ? claims.scp.split(' ').filter((s) => s !== '')
            : []
    const roles = Array.isArray(claims.roles) ? claims.roles.filter((s): s is string => typeof s === 'string') : []
    return { subject, scopes, roles, expiresAt: claims.exp * 1000, via: 'jwt' }
  }
}
