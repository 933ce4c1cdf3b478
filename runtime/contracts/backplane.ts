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
