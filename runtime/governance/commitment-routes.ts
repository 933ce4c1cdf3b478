/**
 * The commitment routes: the listing (a content read: records carry call arguments) with each
 * record's `signed` and `verified` verdicts, and the public keys (open), so a third party can
 * check a record without trusting the listing's verdict.
 */
import type { Platform } from '../platform.js'
import { PlatformError } from '../contracts/index.js'
import { ReadGate } from '../auth/index.js'
import type { LoggedCommitment } from '../contracts/index.js'
import { isSigned, type SignedCommitmentLog } from './commitment-log.js'
import { HTTP_ERRORS } from '../http/index.js'

const BASE = '/api/admin/governance/commitments'
export const COMMITMENTS_DEFAULT_LIMIT = 100
/** Records read from LMDB are verified on the way out (about 0.2 ms each): the cap bounds one request's CPU. */
export const COMMITMENTS_MAX_LIMIT = 1000

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
    verified: log.verify(r),
    // read from the store every node shares: the node that kept it
    ...(entry.node !== undefined ? { node: entry.node } : {})
  }
}

/** Without a log (the flag off) the listing is empty and no key is published. */
export function installCommitmentRoutes(platform: Platform, log: SignedCommitmentLog | undefined): void {
  const reads = new ReadGate(platform.config, platform.principals)
  platform.http.get(BASE, async (ctx) => {
    reads.check(ctx, 'content')
    const raw = ctx.query.get('limit')
    let limit = COMMITMENTS_DEFAULT_LIMIT
    if (raw !== null) {
      if (!/^-?\d{1,9}$/.test(raw))
        throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: 'limit', detail: 'expected an integer' })
      limit = Math.min(Number(raw), COMMITMENTS_MAX_LIMIT)
    }
    if (log === undefined) return []
    return (await log.list(limit)).map((e) => listingRow(e, log))
  })
  platform.http.get(`${BASE}/keys`, (ctx) => {
    reads.check(ctx, 'open')
    return { keys: log?.keys() ?? [] }
  })
}
