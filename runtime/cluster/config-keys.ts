import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

/**
 * The cluster area's keys. `platform.cluster.enabled`, `platform.cluster.node-id` and
 * `platform.postgres.*` are the core's: the node identity and every Postgres-backed store read them
 * whether or not this area runs.
 */
export const CLUSTER_CONFIG_KEYS = {
  'platform.cluster.redis-url': {
    schema: KEY_SCHEMA.nonEmpty,
    secret: true,
    description:
      'Cluster mode: the Redis that carries messages between nodes (pub/sub), e.g. `redis://127.0.0.1:6379`; required when `platform.cluster.enabled` is true'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof CLUSTER_CONFIG_KEYS> {}
}
