import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONFIG_ERRORS } from '../config/index.js'
import { NODE_ID, PlatformError, type NodeIdentity } from '../contracts/index.js'

/** The file in the data directory that keeps a generated node id across restarts. */
export const NODE_ID_FILE = 'node-id'

/**
 * The node's identity: the configured id, else the one kept in `dataDir`, else a new one written
 * there. Kept, because a restarted node must find the runs it owned before it died: a fresh id
 * each start would leave them RUNNING for ever.
 */
export function nodeIdentity(configured: string | undefined, dataDir: string): NodeIdentity {
  const startedAt = new Date().toISOString()
  if (configured !== undefined) return { id: configured, startedAt }
  const file = join(dataDir, NODE_ID_FILE)
  let kept: string | undefined
  try {
    kept = readFileSync(file, 'utf8').trim()
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(file, e)
  }
  if (kept !== undefined) {
    if (!NODE_ID.test(kept))
      throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
        detail: `${file} holds no valid node id (${JSON.stringify(kept.slice(0, 80))}): remove the file for a new one, or set platform.cluster.node-id`
      })
    return { id: kept, startedAt }
  }
  const id = `node-${randomBytes(6).toString('hex')}`
  try {
    mkdirSync(dataDir, { recursive: true })
    // wx: two processes starting on one data directory do not both write an id
    writeFileSync(file, `${id}\n`, { flag: 'wx' })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return nodeIdentity(undefined, dataDir)
    throw unreadable(file, e)
  }
  return { id, startedAt }
}

function unreadable(file: string, e: unknown): PlatformError {
  return new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
    detail: `cannot keep the node id in ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): make the data directory writable or set platform.cluster.node-id`
  })
}
