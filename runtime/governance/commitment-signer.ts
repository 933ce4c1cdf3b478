/**
 * The Ed25519 key that signs commitment records, and the bytes it signs: the JCS canonical form
 * (RFC 8785, the `canonicalize` package) of the record without `proof`, as UTF-8. Anyone holding
 * the public key (served as a JWK) can rebuild those bytes from the JSON alone.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject
} from 'node:crypto'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import canonicalize from 'canonicalize'
import { CONFIG_ERRORS, readRegularFile } from '../config/index.js'
import { PlatformError, type CommitmentRecord } from '../contracts/index.js'

/** A PEM Ed25519 key is a few hundred bytes; anything much larger is not one. */
const MAX_KEY_FILE_BYTES = 65_536

export const SCHEME = 'Ed25519'

/** An Ed25519 public key as a JSON Web Key (RFC 8037), `kid` = the key id. */
export interface PublicJwk {
  kty: 'OKP'
  crv: 'Ed25519'
  x: string
  kid: string
  alg: 'EdDSA'
  use: 'sig'
}

/** 64 bytes, base64url without padding: anything else is not a signature, however lenient a decoder is. */
const SIGNATURE = /^[A-Za-z0-9_-]{86}$/

/** JCS of the record without its `proof`; throws on what JSON cannot hold (NaN, lone surrogates, cycles). */
export function signedBytes(record: CommitmentRecord | Record<string, unknown>): Buffer {
  const body: Record<string, unknown> = { ...record }
  delete body.proof
  const text = canonicalize(body)
  if (text === undefined) throw new TypeError('the record has no JSON form')
  return Buffer.from(text, 'utf8')
}

/** `ed25519:` + the first 16 hex digits of the SHA-256 of the SubjectPublicKeyInfo DER. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' })
  return 'ed25519:' + createHash('sha256').update(der).digest('hex').slice(0, 16)
}

export class Ed25519Signer {
  readonly publicKey: KeyObject
  readonly keyId: string

  constructor(private readonly privateKey: KeyObject) {
    if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519')
      throw new TypeError(`expected an Ed25519 private key, got ${privateKey.asymmetricKeyType ?? privateKey.type}`)
    this.publicKey = createPublicKey(privateKey)
    this.keyId = keyIdOf(this.publicKey)
  }

  static generate(): Ed25519Signer {
    return new Ed25519Signer(generateKeyPairSync('ed25519').privateKey)
  }

  /** The private key as PKCS#8 PEM, the form the key file holds. */
  pkcs8Pem(): string {
    return this.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  }

  /** base64url, no padding. */
  sign(data: Buffer): string {
    return sign(null, data, this.privateKey).toString('base64url')
  }

  /** True when `signature` is this key's over `data`. */
  verify(data: Buffer, signature: string): boolean {
    return verifySignature(this.publicKey, data, signature)
  }

  jwk(): PublicJwk {
    return publicJwk(this.publicKey)
  }
}

/** True when `signature` (base64url, no padding) is `publicKey`'s Ed25519 signature over `data`. */
export function verifySignature(publicKey: KeyObject, data: Buffer, signature: string): boolean {
  if (!SIGNATURE.test(signature)) return false
  return verify(null, data, publicKey, Buffer.from(signature, 'base64url'))
}

export function publicJwk(publicKey: KeyObject): PublicJwk {
  const { x } = publicKey.export({ format: 'jwk' })
  return { kty: 'OKP', crv: 'Ed25519', x: x!, kid: keyIdOf(publicKey), alg: 'EdDSA', use: 'sig' }
}

/**
 * An earlier signing key's public half (SPKI PEM, or the PKCS#8 private key itself), so records it
 * signed keep verifying after a key change. Anything else stops start-up.
 */
export function loadVerifyKey(path: string, configKey: string): KeyObject {
  let pem: string
  try {
    pem = readRegularFile(path, MAX_KEY_FILE_BYTES).toString('utf8')
  } catch (err) {
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `${configKey}: cannot read ${path}: ${(err as Error).message}`
    })
  }
  let key: KeyObject
  try {
    key = createPublicKey({ key: pem, format: 'pem' })
  } catch (err) {
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `${configKey}: ${path} is not a PEM key (${(err as Error).message})`
    })
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `${configKey}: ${path} is not an Ed25519 key (got ${key.asymmetricKeyType ?? 'unknown'})`
    })
  return key
}

export interface LoadedKey {
  signer: Ed25519Signer
  /** True when the file did not exist and was written now. */
  generated: boolean
  /** True when group or others may read the file. */
  exposed: boolean
}

/**
 * Reads the PKCS#8 PEM key at `path`. When `create` and the file is absent, writes a new key
 * there with mode 0600 (never over an existing file). A file that is missing (without `create`),
 * unreadable or not an Ed25519 private key stops start-up: signing with some other key would
 * hand out records nobody can check.
 */
export function loadSigningKey(path: string, create: boolean, configKey: string): LoadedKey {
  if (!existsSync(path)) {
    if (!create)
      throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
        detail: `${configKey}: ${path} does not exist (write a PKCS#8 PEM Ed25519 key there, e.g. \`openssl genpkey -algorithm ed25519 -out ${path}\`, or leave the key empty to use a generated one)`
      })
    const signer = Ed25519Signer.generate()
    try {
      writeFileSync(path, signer.pkcs8Pem(), { mode: 0o600, flag: 'wx' })
    } catch (err) {
      throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
        detail: `${configKey}: cannot write a new signing key to ${path}: ${(err as Error).message}`
      })
    }
    return { signer, generated: true, exposed: false }
  }
  let pem: string
  try {
    pem = readRegularFile(path, MAX_KEY_FILE_BYTES).toString('utf8')
  } catch (err) {
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `${configKey}: cannot read ${path}: ${(err as Error).message}`
    })
  }
  let signer: Ed25519Signer
  try {
    if (!pem.includes('-----BEGIN PRIVATE KEY-----')) throw new Error('not an unencrypted PKCS#8 PEM private key')
    signer = new Ed25519Signer(createPrivateKey({ key: pem, format: 'pem' }))
  } catch (err) {
    throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
      detail: `${configKey}: ${path} is not a usable Ed25519 signing key (${(err as Error).message}); expected PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----")`
    })
  }
  return { signer, generated: false, exposed: (statSync(path).mode & 0o077) !== 0 }
}
