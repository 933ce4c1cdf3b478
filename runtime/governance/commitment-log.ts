/**
 * The commitment log: issues records (signed when a signer is installed), keeps them in memory
 * and in LMDB up to a retention bound like the decision log, and checks their signatures.
 */
import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import canonicalize from 'canonicalize'
import { RetainedLog, type LogKey, type PostgresLog, type WriteFailureReport } from '../store/index.js'
import {
  PlatformError,
  COMMITMENT_OUTCOMES,
  type CommitmentInput,
  type CommitmentLog,
  type CommitmentProof,
  type CommitmentRecord,
  type LoggedCommitment
} from '../contracts/index.js'
import type { KeyObject } from 'node:crypto'
import {
  SCHEME,
  keyIdOf,
  publicJwk,
  signedBytes,
  verifySignature,
  type Ed25519Signer,
  type PublicJwk
} from './commitment-signer.js'
import { GOVERNANCE_ERRORS } from './errors.js'

/** Records kept in memory; older ones are read from LMDB. */
export const COMMITMENTS_IN_MEMORY = 500
/** How long a record is valid when the issuer does not say. */
export const DEFAULT_VALIDITY_MS = 60 * 60 * 1000
/** Members the listing adds beside a record's own, so a record may not carry them. */
export const LISTING_MEMBERS = ['eventTimestamp', 'signed', 'verified'] as const

const UNSIGNED_AT = new Date(0).toISOString()
const STRING_FIELDS = ['coordinationId', 'issuer', 'principal', 'subject', 'scope'] as const

export interface CommitmentLogOptions {
  signer?: Ed25519Signer | undefined
  /** Earlier signing keys: published and accepted, so their records keep verifying. */
  verifyKeys?: readonly KeyObject[]
  db?: Database<LoggedCommitment, LogKey> | undefined
  retention?: number
  onWriteFailure?: WriteFailureReport | undefined
  /** Cluster mode: every record kept in PostgreSQL (instead of `db`), and `list` reads every node's. */
  shared?: PostgresLog<LoggedCommitment> | undefined
}

export class SignedCommitmentLog implements CommitmentLog {
  private readonly log: RetainedLog<LoggedCommitment>
  private readonly shared: PostgresLog<LoggedCommitment> | undefined
  private readonly signer: Ed25519Signer | undefined
  /** keyId → public key: the signer's and the earlier ones. */
  private readonly published = new Map<string, KeyObject>()
  private readonly listeners: ((r: CommitmentRecord) => void)[] = []
  /** Verdicts of records read before: a listing re-reads the same in-memory objects. */
  private readonly checked = new WeakMap<CommitmentRecord, boolean>()

  constructor(opts: CommitmentLogOptions = {}) {
    this.signer = opts.signer
    this.shared = opts.shared
    if (opts.signer !== undefined) this.published.set(opts.signer.keyId, opts.signer.publicKey)
    for (const k of opts.verifyKeys ?? []) if (!this.published.has(keyIdOf(k))) this.published.set(keyIdOf(k), k)
    this.log = new RetainedLog({
      name: 'commitments',
      capacity: COMMITMENTS_IN_MEMORY,
      db: opts.db,
      retention: opts.retention ?? 100_000,
      onWriteFailure: opts.onWriteFailure
    })
  }

  /** The public keys records are checked against, the signer's first, as JWKs. */
  keys(): PublicJwk[] {
    return [...this.published.values()].map(publicJwk)
  }

  onRecord(fn: (r: CommitmentRecord) => void): void {
    this.listeners.push(fn)
  }

  /** Builds and signs a record without keeping it. */
  issue(input: CommitmentInput, now = new Date()): CommitmentRecord {
    const i = input as unknown as Record<string, unknown>
    if (typeof i !== 'object' || i === null)
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, { detail: 'a commitment input must be an object' })
    for (const f of STRING_FIELDS)
      if (typeof i[f] !== 'string' || (f !== 'principal' && i[f] === ''))
        throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
          detail: `${f} must be a ${f === 'principal' ? '' : 'non-empty '}string`
        })
    if (!(COMMITMENT_OUTCOMES as readonly unknown[]).includes(i.outcome))
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
        detail: `outcome must be one of ${COMMITMENT_OUTCOMES.join(', ')}`
      })
    const chain = i.delegationChain ?? []
    if (!Array.isArray(chain) || chain.some((d) => typeof d !== 'string'))
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
        detail: 'delegationChain must be an array of strings'
      })
    const issuedAt = now.toISOString()
    let expiresAt = new Date(now.getTime() + DEFAULT_VALIDITY_MS).toISOString()
    if (i.expiresAt !== undefined) {
      const t = typeof i.expiresAt === 'string' ? Date.parse(i.expiresAt) : NaN
      if (Number.isNaN(t))
        throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
          detail: 'expiresAt must be an ISO 8601 timestamp'
        })
      expiresAt = new Date(t).toISOString()
    }
    const record: CommitmentRecord = {
      id: `cmt-${randomUUID()}`,
      coordinationId: input.coordinationId,
      issuer: input.issuer,
      principal: input.principal,
      subject: input.subject,
      scope: input.scope,
      delegationChain: [...(chain as string[])],
      issuedAt,
      expiresAt,
      outcome: input.outcome,
      properties: jsonObject(i.properties ?? {}, 'properties'),
      proof: unsignedProof()
    }
    let bytes: Buffer
    try {
      bytes = signedBytes(record)
    } catch (err) {
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
        detail: `the record is not JSON: ${(err as Error).message}`
      })
    }
    if (this.signer !== undefined)
      record.proof = {
        scheme: SCHEME,
        keyId: this.signer.keyId,
        signature: this.signer.sign(bytes),
        createdAt: issuedAt
      }
    return record
  }

  async record(input: CommitmentInput): Promise<CommitmentRecord> {
    const record = this.issue(input)
    // signed here a moment ago: a listing need not check it again
    this.checked.set(record, this.signer !== undefined)
    await this.keep(record)
    return record
  }

  async append(record: CommitmentRecord): Promise<void> {
    await this.keep(checkedRecord(record))
  }

  recent(limit: number): LoggedCommitment[] {
    if (!(limit >= 1)) return []
    return this.log.newest(Math.floor(limit))
  }

  /** The newest `limit` records, newest first: every node's when they are kept in PostgreSQL. */
  async list(limit: number): Promise<LoggedCommitment[]> {
    if (this.shared === undefined) return this.recent(limit)
    if (!(limit >= 1)) return []
    return (await this.shared.page(Math.floor(limit)))!.entries
  }

  verify(record: CommitmentRecord): boolean {
    const known = this.checked.get(record)
    if (known !== undefined) return known
    const ok = this.check(record)
    this.checked.set(record, ok)
    return ok
  }

  private check(record: CommitmentRecord): boolean {
    const p = record.proof as Partial<CommitmentProof> | undefined
    if (p?.scheme !== SCHEME || typeof p.keyId !== 'string' || typeof p.signature !== 'string') return false
    const key = this.published.get(p.keyId)
    if (key === undefined) return false
    try {
      return verifySignature(key, signedBytes(record), p.signature)
    } catch {
      // a stored record JSON cannot hold was not signed by us
      return false
    }
  }

  private keep(record: CommitmentRecord): Promise<void> {
    // the kept object is the one listed and whose verdict is cached: nobody may change it
    deepFreeze(record)
    const entry = { eventTimestamp: new Date().toISOString(), record }
    const kept = this.log.append(entry)
    const written = this.shared === undefined ? kept : this.shared.append(entry)
    for (const fn of this.listeners) {
      try {
        fn(record)
      } catch {
        /* a listener never loses a record */
      }
    }
    return written
  }
}

function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return
  Object.freeze(v)
  for (const x of Object.values(v)) deepFreeze(x)
}

/** The fields of the journal's `CommitmentRecorded` event for a record. */
export function recordedEventFields(r: CommitmentRecord): Record<string, unknown> {
  return {
    subject: r.subject,
    issuer: r.issuer,
    outcome: r.outcome,
    scope: r.scope,
    signatureScheme: r.proof.scheme,
    signatureKeyId: r.proof.keyId,
    signed: isSigned(r)
  }
}

/** True when the record carries a real proof (a scheme other than `none` and a signature). */
export function isSigned(record: CommitmentRecord): boolean {
  const p = record.proof as Partial<CommitmentProof> | undefined
  return p !== undefined && p.scheme !== 'none' && typeof p.signature === 'string' && p.signature !== ''
}

export function unsignedProof(): CommitmentProof {
  return { scheme: 'none', keyId: '', signature: '', createdAt: UNSIGNED_AT }
}

/** The JSON the signature would cover: a Date becomes its string, undefined members go. */
function jsonObject(v: unknown, name: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, { detail: `${name} must be an object` })
  let text: string | undefined
  try {
    text = canonicalize(v)
  } catch (err) {
    throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
      detail: `${name} is not JSON: ${(err as Error).message}`
    })
  }
  const parsed = JSON.parse(text!) as Record<string, unknown>
  if (holdsProtoKey(parsed))
    throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
      detail: `${name} holds a "__proto__" member, which LMDB's decoder renames: it could not be verified`
    })
  return parsed
}

function holdsProtoKey(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false
  if (!Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, '__proto__')) return true
  return Object.values(v).some(holdsProtoKey)
}

/** A record issued elsewhere, checked for shape only and rebuilt in the declared member order. */
function checkedRecord(r: CommitmentRecord): CommitmentRecord {
  const o = jsonObject(r, 'a commitment record')
  for (const f of ['id', ...STRING_FIELDS, 'issuedAt', 'expiresAt', 'outcome'])
    if (typeof o[f] !== 'string')
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, { detail: `record member ${f} must be a string` })
  if (!Array.isArray(o.delegationChain))
    throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
      detail: 'record member delegationChain must be an array'
    })
  jsonObject(o.properties, 'record member properties')
  const proof = o.proof as Record<string, unknown> | undefined
  if (typeof proof !== 'object' || proof === null || Array.isArray(proof))
    throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, { detail: 'record member proof must be an object' })
  for (const f of ['scheme', 'keyId', 'signature', 'createdAt'])
    if (typeof proof[f] !== 'string')
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
        detail: `record member proof.${f} must be a string`
      })
  for (const f of LISTING_MEMBERS)
    if (f in o)
      throw new PlatformError(GOVERNANCE_ERRORS.COMMITMENT_INVALID, {
        detail: `record member ${f} is reserved for the listing`
      })
  const ordered: Record<string, unknown> = {}
  for (const f of [
    'id',
    'coordinationId',
    'issuer',
    'principal',
    'subject',
    'scope',
    'delegationChain',
    'issuedAt',
    'expiresAt',
    'outcome',
    'properties'
  ])
    ordered[f] = o[f]
  // members a later version adds are kept (and signed) after the known ones
  for (const [k, v] of Object.entries(o)) if (!(k in ordered) && k !== 'proof') ordered[k] = v
  ordered.proof = proof
  return ordered as unknown as CommitmentRecord
}
