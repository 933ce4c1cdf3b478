/** Webhooks: one signed, durable, bounded delivery path for every area that calls clients back. */
export { WEBHOOKS } from './key.js'
export type { WebhookService } from './webhook-service.js'
