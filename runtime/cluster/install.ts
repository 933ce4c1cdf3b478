import { CONFIG_ERRORS } from '../config/index.js'
import { BACKPLANE, PlatformError, SHARED_COUNTERS } from '../contracts/index.js'
import type { Area, Platform } from '../platform.js'
import { CLUSTER_CONFIG_KEYS } from './config-keys.js'

/**
 * The cluster area: in cluster mode (`platform.cluster.enabled`) it adds the Redis backplane every
 * area reads through `platform.backplane()` and the Redis counters limits read through
 * `platform.sharedCounters()`, and reports Redis in `/readyz` (degraded when out of reach: the node
 * keeps serving its own clients). Off, it does nothing and no Redis client loads.
 */
export const clusterArea: Area = {
  name: 'cluster',
  dependsOn: [],
  configKeys: CLUSTER_CONFIG_KEYS,
  async install(platform: Platform): Promise<void> {
    if (!platform.config.get('platform.cluster.enabled')) return
    const url = platform.config.get('platform.cluster.redis-url')
    if (url === undefined)
      throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
        detail:
          'platform.cluster.redis-url is required when platform.cluster.enabled is true, e.g. redis://127.0.0.1:6379'
      })
    // loaded here only: a single node never loads a Redis client
    const { RedisBackplane } = await import('./redis-backplane.js')
    const { RedisCounters } = await import('./redis-counters.js')
    const redis = { url, node: platform.node.id, logger: platform.logger.child({ area: 'cluster' }) }
    const backplane = new RedisBackplane(redis)
    backplane.start()
    platform.extend(BACKPLANE, backplane)
    platform.addReadiness('backplane', () => (backplane.available() ? true : 'degraded'))
    platform.onClose(() => backplane.close())
    // limits count across the cluster on the same Redis; out of reach, they refuse (fail closed)
    const counters = new RedisCounters(redis)
    counters.start()
    platform.extend(SHARED_COUNTERS, counters)
    platform.addReadiness('counters', () => (counters.available() ? true : 'degraded'))
    platform.onClose(() => counters.close())
    platform.logger.info({ node: platform.node.id }, 'cluster mode: this node joins through Redis')
  }
}
