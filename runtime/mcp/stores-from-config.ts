/**
 * Where the MCP area keeps its sessions and handed-out tasks: this node's LMDB, or PostgreSQL
 * shared by the nodes (the default in cluster mode, so a session or a task continues on any node).
 */
import { storeKindOf } from '../config/index.js'
import type { Platform } from '../platform.js'
import { PostgresSessionRecords } from './postgres-session-records.js'
import { PostgresTasks } from './postgres-tasks.js'
import { LmdbSessionRecords, type SessionRecord, type SessionRecords } from './session-records.js'

/** Starts a store on the node's one PostgreSQL pool (its readiness is the pool's) and stops it on close. */
async function started<T extends { start(): Promise<unknown>; stop(): Promise<void> }>(
  platform: Platform,
  store: T
): Promise<T> {
  await store.start()
  platform.onClose(() => store.stop())
  return store
}

/** The session store the configuration names, started. */
export async function sessionRecordsFromConfig(platform: Platform): Promise<SessionRecords> {
  const key = 'platform.mcp.sessions.store'
  if (storeKindOf(platform.config, key) === 'lmdb')
    return new LmdbSessionRecords(
      platform.store.db<SessionRecord, string>('mcp-sessions'),
      platform.store.db<1, string>('mcp-session-subscriptions')
    )
  return started(platform, new PostgresSessionRecords({ db: () => platform.postgres(`${key} is postgres`) }))
}

/** The shared task store the configuration names, started; undefined for this node's LMDB. */
export async function tasksStoreFromConfig(platform: Platform): Promise<PostgresTasks | undefined> {
  const key = 'platform.mcp.tasks.store'
  if (storeKindOf(platform.config, key) === 'lmdb') return undefined
  return started(
    platform,
    new PostgresTasks({
      db: () => platform.postgres(`${key} is postgres`),
      node: platform.node.id,
      // the same lease as the runs and A2A tasks: a lost node's tasks end within about 1.5 of it
      leaseMs: platform.config.get('platform.cluster.lease-ms')
    })
  )
}
