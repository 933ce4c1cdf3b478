/**
 * The webhooks area: one delivery path for every callback the platform promises a client (an
 * interaction's webhook, A2A push notifications): URLs checked against the allow-list, a durable
 * and bounded outbox in LMDB, signed attempts with retries. It lists the outbox under
 * /api/admin/webhooks when the admin control plane is on.
 */
import type { Area, Platform } from '../platform.js'
import { ADMIN, mountAreaRoutes } from '../admin/index.js'
import { CONFIG_ERRORS } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import { webhookRoutes } from './admin-routes.js'
import { HostAllowList } from './allowed-hosts.js'
import { attemptDelivery } from './delivery-attempt.js'
import { WEBHOOKS } from './key.js'
import { Outbox, type FailedDelivery, type StoredDelivery } from './outbox.js'
import { signature, signingKey } from './signature.js'
import type { WebhookService } from './webhook-service.js'
import { WEBHOOKS_CONFIG_KEYS } from './config-keys.js'
import { WEBHOOKS_ERRORS } from './errors.js'

export function installWebhooks(platform: Platform): void {
  const { config } = platform
  const logger = platform.logger.child({ area: 'webhooks' })
  let allow: HostAllowList
  try {
    allow = new HostAllowList(config.get('platform.webhooks.allowed-hosts'))
  } catch (err) {
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `platform.webhooks.allowed-hosts: ${(err as Error).message}`
    })
  }
  const key = signingKey(config)
  const ready = config.get('platform.webhooks.enabled') && key !== undefined
  const timeoutMs = config.get('platform.webhooks.timeout-ms')
  const userAgent = `agent-platform/${platform.version} (webhooks)`
  const send = (d: StoredDelivery, body: string, signal: AbortSignal): ReturnType<typeof attemptDelivery> => {
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      ...d.headers,
      'content-type': 'application/json',
      'user-agent': userAgent,
      'webhook-id': d.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature(key!, d.id, timestamp, body)
    }
    return attemptDelivery(d.url, headers, body, { allow, timeoutMs, signal })
  }
  const outbox = new Outbox({
    db: platform.store.db<StoredDelivery, number>('webhook-outbox'),
    failures: platform.store.db<FailedDelivery, number>('webhook-failures'),
    logger,
    limits: {
      total: config.get('platform.webhooks.max-pending'),
      perOwner: config.get('platform.webhooks.max-pending-per-principal')
    },
    retry: {
      maxAttempts: config.get('platform.webhooks.max-attempts'),
      baseMs: config.get('platform.webhooks.retry-base-ms'),
      maxMs: config.get('platform.webhooks.retry-max-ms')
    },
    concurrency: config.get('platform.webhooks.concurrency'),
    failuresKept: config.get('platform.webhooks.failures-kept'),
    send
  })
  if (ready) outbox.start()
  else if (outbox.stats.pending > 0)
    logger.warn(
      { pending: outbox.stats.pending },
      'webhook deliveries wait in the outbox, but webhooks are off or have no secret: none is sent until they are on'
    )
  platform.onClose(() => outbox.close())
  if (platform.hasArea(ADMIN))
    mountAreaRoutes(
      platform,
      webhookRoutes(platform, outbox, () => ready)
    )
  const service: WebhookService = {
    ready,
    checkUrl: (url) => {
      if (!ready) throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOKS_NOT_CONFIGURED)
      return allow.check(url).href
    },
    hasRoom: (owner, n) => outbox.hasRoom(owner, n),
    enqueue: (d) => outbox.enqueue(d),
    hold: (d) => outbox.hold(d),
    release: (id, body) => outbox.release(id, body),
    drop: (id) => outbox.drop(id),
    held: (source) => outbox.held(source)
  }
  platform.provide(WEBHOOKS, service)
}

export const webhooksArea: Area = {
  name: 'webhooks',
  dependsOn: ['admin'],
  configKeys: WEBHOOKS_CONFIG_KEYS,
  errors: WEBHOOKS_ERRORS,
  install: installWebhooks
}
