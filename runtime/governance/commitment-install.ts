/**
 * Opens the commitment log when `platform.ai.governance.commitment-records.enabled`: the signing
 * key (generated under the data directory or the operator's file), the earlier keys it still
 * accepts, and the LMDB database the records live in.
 */
import { storeKindOf } from '../config/index.js'
import { join, resolve } from 'node:path'
import type { Platform } from '../platform.js'
import { PostgresLog, countAndLogWriteFailures } from '../store/index.js'
import type { LoggedCommitment } from '../contracts/index.js'
import { SignedCommitmentLog } from './commitment-log.js'
import { loadSigningKey, loadVerifyKey } from './commitment-signer.js'
import { COMMITMENTS } from './key.js'

/** The generated key's file name under the data directory. */
export const DEFAULT_KEY_FILE = 'commitment-signing-key.pem'
const KEY_FILE = 'platform.ai.governance.commitment-records.key-file'
const STORE_KEY = 'platform.ai.governance.commitment-records.store'

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
  const retention = config.get('platform.ai.governance.commitment-records.retention')
  const onWriteFailure = countAndLogWriteFailures(platform.metrics.storeWriteFailures, log)
  const kind = storeKindOf(config, STORE_KEY)
  const shared =
    kind === 'postgres'
      ? new PostgresLog<LoggedCommitment>({
          pg: platform.corePool.for(STORE_KEY),
          name: 'commitments',
          node: platform.node.id,
          retention,
          onWriteFailure
        })
      : undefined
  // every node verifies the records the others signed only with their key: one key file for all
  if (shared !== undefined && configured === '')
    log.warn(
      { path },
      `commitment records are shared between nodes but each node signs with a key of its own (${path}): set ${KEY_FILE} to one key file deployed to every node, or records signed on another node list as unverified`
    )
  const commitments = new SignedCommitmentLog({
    signer: key.signer,
    verifyKeys,
    db: kind === 'lmdb' ? platform.store.db<LoggedCommitment, [number, number]>('commitments') : undefined,
    retention,
    onWriteFailure,
    shared
  })
  platform.provide(COMMITMENTS, commitments)
  return commitments
}
