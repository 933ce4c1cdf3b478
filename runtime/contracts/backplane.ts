import { CORE, ExtensionPoint } from './area-key.js'

/**
 * Who this process is among the nodes sharing one database: the owner recorded on every run it
 * starts, so a node that restarts marks interrupted only its own runs, never another live node's.
 */
export interface NodeIdentity {
  /** `platform.cluster.node-id`, else generated once and kept in the data directory. */
  readonly id: string
  /** When this process started, ISO 8601 UTC. */
  readonly startedAt: string
}

/** What a node id may be: it is a column value, a log field and part of message envelopes. */
export const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** Receives a message another node published on a topic: its data and the sender's node id. */
export type BackplaneListener = (data: unknown, from: string) => void

/**
 * Carries messages between the nodes of a cluster. A publisher delivers to its own local
 * subscribers itself (local first); the backplane carries the message to the other nodes only.
 */
export interface Backplane {
  readonly kind: 'in-process' | 'redis'
  /** The node publishing and subscribing through this backplane. */
  readonly node: string
  /**
   * Sends `data` (JSON-serialisable) to the subscribers of `topic` on the other nodes. Never throws
   * for a backplane out of reach: the message is dropped and counted, local delivery is unaffected.
   */
  publish(topic: string, data: unknown): void
  /**
   * Calls `listener` for each message another node publishes on `topic` (this node's own are
   * ignored). However many listeners a topic has, the node holds one subscription for it.
   * Returns the unsubscribe function; the last listener gone drops the subscription.
   */
  subscribe(topic: string, listener: BackplaneListener): () => void
  /** Whether messages can reach the other nodes now (`/readyz` reports it as degraded when not). */
  available(): boolean
  /** Messages dropped because the backplane could not be reached. */
  readonly dropped: number
  close(): Promise<void>
}

/** What a topic name may be: a backplane channel name, never built from unchecked input. */
export const BACKPLANE_TOPIC = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/

/**
 * The backplane every area that needs cross-node delivery reads (`platform.backplane()`): the
 * cluster area adds the Redis one in cluster mode; without it a node has its in-process default.
 */
export const BACKPLANE = new ExtensionPoint<Backplane>(CORE, 'backplane', true)

/**
 * A count a node reports in its heartbeat to the others, added by the area that keeps it (the
 * interactions area adds `runsOwned`): the area that sends heartbeats depends on none of them.
 */
export interface NodeCount {
  readonly name: 'runsOwned'
  read(): number
}

/** The counts every heartbeat carries (see NodeCount); a count nobody added is 0. */
export const NODE_COUNTS = new ExtensionPoint<NodeCount>(CORE, 'node-counts')
