import type { Area, Platform } from '../platform.js'
import { AI } from '../ai/index.js'
import { WEBHOOKS } from '../webhooks/index.js'
import { StepFeed } from './feed.js'
import { INTERACTIONS } from './key.js'
import { installRoutes } from './routes.js'
import { describeRoutes } from './route-docs.js'
import { InteractionService } from './service.js'
import { InteractionStreams } from './stream.js'
import { NODE_COUNTS, PlatformError } from '../contracts/index.js'
import { startStore, storeFromConfig } from './store-from-config.js'
import { INTERACTIONS_CONFIG_KEYS } from './config-keys.js'
import { INTERACTION_ERRORS } from './errors.js'
import { resumeWebhooks } from './webhook.js'
import { postgresReadiness } from '../store/index.js'

/**
 * The interactions area: durable agent turns run through the AI area and streamed over transport.
 * Off (`platform.interactions.enabled: false`) it adds no routes and provides no service.
 */
export const interactionsArea: Area = {
  name: 'interactions',
  errors: INTERACTION_ERRORS,
  dependsOn: ['ai', 'transport', 'webhooks'],
  configKeys: INTERACTIONS_CONFIG_KEYS,
  async install(platform: Platform): Promise<void> {
    const demo = platform.config.get('platform.interactions.demo-principal')
    if (demo !== undefined)
      platform.logger.warn(
        { principal: demo },
        'platform.interactions.demo-principal is set: every interactions request runs as this principal. Never enable it in production.'
      )
    if (!platform.config.get('platform.interactions.enabled')) return
    const store = storeFromConfig(platform)
    // runs left RUNNING by a process that died are FAILED before anyone can read them
    const interrupted = await startStore(platform, store)
    platform.addReadiness(
      'interactions-store',
      postgresReadiness(() => store.available(), platform.config.get('platform.cluster.enabled'))
    )
    if (interrupted > 0)
      platform.logger.warn({ interrupted }, 'interactions left running by the previous process marked FAILED')
    const webhooks = platform.area(WEBHOOKS)
    // the webhooks the last process promised and did not deliver, now that its runs are settled
    await resumeWebhooks(webhooks, store, platform.logger)
    const cfg = platform.config
    // in cluster mode live steps also reach, and come from, the other nodes
    const backplane = cfg.get('platform.cluster.enabled') ? platform.backplane() : undefined
    const service = new InteractionService({
      store,
      feed: new StepFeed(backplane),
      cluster: { node: platform.node.id, leaseMs: cfg.get('platform.cluster.lease-ms'), backplane },
      ai: platform.area(AI),
      agents: () => platform.plugins.agents(),
      logger: platform.logger,
      webhooks,
      maxSteps: cfg.get('platform.interactions.max-steps'),
      coalesceMs: cfg.get('platform.interactions.text-coalesce-ms'),
      syncTimeoutMs: cfg.get('platform.interactions.sync-timeout-ms'),
      demoPrincipal: () => cfg.get('platform.interactions.demo-principal'),
      quota: () => ({
        runsInFlight: cfg.get('platform.interactions.quota.runs-in-flight'),
        bytesPerMinute: cfg.get('platform.interactions.quota.bytes-per-minute')
      }),
      counters: () => platform.sharedCounters(),
      idempotency: {
        maxKeys: cfg.get('platform.interactions.idempotency.max-keys'),
        ttlMs: cfg.get('platform.interactions.idempotency.ttl-seconds') * 1000,
        syncWaitMs: cfg.get('platform.interactions.sync-timeout-ms')
      }
    })
    const streams = new InteractionStreams(platform, {
      store,
      feed: service.feed,
      readable: async (id, headers) => {
        // the REST read's rule, from the same function
        const found = await service.get(service.readerOf(platform.principals.fromHeaders(headers)?.name), id)
        if (found === undefined) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_FOUND, { id })
        return found
      }
    })
    installRoutes(platform, service, streams)
    describeRoutes(platform.http)
    streams.mount()
    platform.onClose(async () => {
      await service.close()
      await store.stop()
    })
    // the other nodes see in this node's heartbeat how many runs it drives
    platform.extend(NODE_COUNTS, { name: 'runsOwned', read: () => service.inFlight })
    platform.provide(INTERACTIONS, service)
  }
}
