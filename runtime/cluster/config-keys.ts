import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

/**
 * The cluster area's keys (the interactions area reads the lease, and declares this area for it).
 * `platform.cluster.enabled`, `platform.cluster.node-id` and `platform.postgres.*` are the core's:
 * the node identity and every Postgres-backed store read them whether or not this area runs.
 */
export const CLUSTER_CONFIG_KEYS = {
  'platform.cluster.redis-url': {
    schema: KEY_SCHEMA.nonEmpty,
    secret: true,
    description:
      'Cluster mode: the Redis that carries messages between nodes (pub/sub), e.g. `redis://127.0.0.1:6379`; required when `platform.cluster.enabled` is true'
  },
  'platform.cluster.lease-ms': {
    schema: { type: 'integer', minimum: 100, maximum: 600_000 },
    default: 5000,
    description:
      'How long a node owns a run it no longer renews: each node renews the leases of its runs three times per lease, and when a node is lost another node ends its runs FAILED `interrupted: node lost` once their lease has expired (within about 1.5 leases of the loss)'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof CLUSTER_CONFIG_KEYS> {}
}
