/**
 * The commitment routes: the listing (a content read: records carry call arguments) with each
 * record's `signed` and `verified` verdicts, and the public keys (open), so a third party can
 * check a record without trusting the listing's verdict.
 */
import { join, resolve } from 'node:path'
import type { Platform } from '../platform.js'
import { PlatformError } from '../http/index.js'
import { ReadGate } from '../auth/index.js'
import { countAndLogWriteFailures } from '../store/index.js'
import type { LoggedCommitment } from '../contracts/index.js'
import { SignedCommitmentLog, isSigned } from './commitment-log.js'
import { loadSigningKey, loadVerifyKey } from './commitment-signer.js'
import { COMMITMENTS } from './key.js'

const BASE = '/api/admin/governance/commitments'
export const COMMITMENTS_DEFAULT_LIMIT = 100
/** Each listed record is verified (cached once seen): the cap bounds one request's CPU. */
export const COMMITMENTS_MAX_LIMIT = 1000
/** The generated key's file name under the data directory. */
export const DEFAULT_KEY_FILE = 'commitment-signing-key.pem'
const KEY_FILE = 'platform.ai.governance.commitment-records.key-file'

/**
 * With `platform.ai.governance.commitment-records.enabled`, opens the log with its signing key
 * and provides it under COMMITMENTS; a key that does not load stops start-up.
 */
export function installCommitments(platform: Platform): SignedCommitmentLog | undefined {
  const { config, logger } = platform
  if (!config.get('platform.ai.governance.commitment-records.enabled')) return undefined
  const log = logger.child({ area: 'governance' })
  const configured = config.get(KEY_FILE)
  const path = configured === '' ? join(platform.store.path, DEFAULT_KEY_FILE) : resolve(configured)
  const key = loadSigningKey(path, configured === '', KEY_FILE)
  // a warning: records verify only while this key is kept, so the operator should know it exists
  if (key.generated)
    log.warn({ path, keyId: key.signer.keyId }, 'generated a commitment signing key: back it up with the data')
  if (key.exposed) log.warn({ path }, `the commitment signing key ${path} is readable by group or others: chmod 600 it`)
  const verifyKeys = config
    .get('platform.ai.governance.commitment-records.verify-key-files')
    .map((f) => loadVerifyKey(resolve(f), 'platform.ai.governance.commitment-records.verify-key-files'))
  const commitments = new SignedCommitmentLog({
    signer: key.signer,
    verifyKeys,
    db: platform.store.db<LoggedCommitment, [number, number]>('commitments'),
    retention: config.get('platform.ai.governance.commitment-records.retention'),
    onWriteFailure: countAndLogWriteFailures(platform.metrics.storeWriteFailures, log)
  })
  platform.provide(COMMITMENTS, commitments)
  return commitments
}

/** One listing row: the record's members with `eventTimestamp` after `coordinationId`, then the verdicts. */
export function listingRow(entry: LoggedCommitment, log: SignedCommitmentLog): Record<string, unknown> {
  const r = entry.record
  const { id, coordinationId, ...rest } = r
  return {
    id,
    coordinationId,
    eventTimestamp: entry.eventTimestamp,
    ...rest,
    signed: isSigned(r),
    verified: log.verify(r)
  }
}

/** Without a log (the flag off) the listing is empty and no key is published. */
export function installCommitmentRoutes(platform: Platform, log: SignedCommitmentLog | undefined): void {
  const reads = new ReadGate(platform.config, platform.principals)
  platform.http.get(BASE, (ctx) => {
    reads.check(ctx, 'content')
    const raw = ctx.query.get('limit')
    let limit = COMMITMENTS_DEFAULT_LIMIT
    if (raw !== null) {
      if (!/^-?\d{1,9}$/.test(raw))
        throw new PlatformError('INVALID_QUERY', { name: 'limit', detail: 'expected an integer' })
      limit = Math.min(Number(raw), COMMITMENTS_MAX_LIMIT)
    }
    if (log === undefined) return []
    return log.recent(limit).map((e) => listingRow(e, log))
  })
  platform.http.get(`${BASE}/keys`, (ctx) => {
    reads.check(ctx, 'open')
    return { keys: log?.keys() ?? [] }
  })
}
