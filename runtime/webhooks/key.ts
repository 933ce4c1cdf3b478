import { AreaKey } from '../contracts/index.js'
import type { WebhookService } from './webhook-service.js'

/** The webhooks area's service: the URL check and the durable outbox. */
export const WEBHOOKS = new AreaKey<WebhookService>('webhooks')
