/**
 * Commitment records: what a coordinator committed to when it dispatched an agent call (who asked,
 * which agent, which skill, with what arguments, and how it went), signed so that a third party
 * holding the platform's public key can check the record was not altered.
 */

/** The outcomes a record may carry: the gate's verdict on a dispatch, then the call's course. */
export const COMMITMENT_OUTCOMES = ['admit', 'deny', 'transform', 'started', 'completed', 'failed'] as const
export type CommitmentOutcome = (typeof COMMITMENT_OUTCOMES)[number]

/**
 * `scheme` is `Ed25519` (or `none` when no signer is installed), `keyId` names the key
 * (`ed25519:` + the first 16 hex digits of the SHA-256 of its SubjectPublicKeyInfo DER),
 * `signature` is base64url without padding, `createdAt` ISO 8601 (the epoch when unsigned).
 */
export interface CommitmentProof {
  scheme: string
  keyId: string
  signature: string
  createdAt: string
}

/**
 * The signature covers the JCS canonical form (RFC 8785) of the record without its `proof`
 * member, encoded as UTF-8; every other member, including `properties`, is signed.
 */
export interface CommitmentRecord {
  /** `cmt-<uuid>` */
  id: string
  coordinationId: string
  /** `coordinator:<name>` */
  issuer: string
  principal: string
  /** The agent called. */
  subject: string
  /** The skill called. */
  scope: string
  /** Who delegated to whom before the issuer, outermost first. */
  delegationChain: string[]
  issuedAt: string
  expiresAt: string
  outcome: CommitmentOutcome
  /** The call's arguments (JSON). */
  properties: Record<string, unknown>
  proof: CommitmentProof
}

/** What the fleet hands the log; the log adds the id, the times and the proof. */
export interface CommitmentInput {
  coordinationId: string
  issuer: string
  principal: string
  subject: string
  scope: string
  outcome: CommitmentOutcome
  delegationChain?: string[]
  properties?: Record<string, unknown>
  /** Defaults to one hour after issue. */
  expiresAt?: string
}

/** A stored record with the time it was logged. */
export interface LoggedCommitment {
  eventTimestamp: string
  record: CommitmentRecord
  /** The node that kept it, when read from the store every node shares. */
  node?: string
}

export interface CommitmentLog {
  /**
   * Signs (when a signer is installed) and keeps a record; resolves once it is durable. Bad input
   * rejects with a message naming the field and keeps nothing.
   */
  record(input: CommitmentInput): Promise<CommitmentRecord>
  /**
   * Keeps a record issued elsewhere (a remote coordinator's, one restored from a checkpoint) as
   * it is: signed by another key, unsigned or altered, it is kept and simply does not verify.
   */
  append(record: CommitmentRecord): Promise<void>
  /** The newest `limit` records, newest first; `limit <= 0` gives none. */
  recent(limit: number): LoggedCommitment[]
  /** True when the record carries an Ed25519 signature by one of this log's keys and it checks. */
  verify(record: CommitmentRecord): boolean
  /** Called for every record kept (the journal will emit `CommitmentRecorded`); a throwing listener is ignored. */
  onRecord(fn: (record: CommitmentRecord) => void): void
}
