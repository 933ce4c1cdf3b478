import { defineErrors } from '../contracts/index.js'

/** The webhooks area's codes: a webhook refused when a client configures it, or an outbox with no room. */
export const WEBHOOKS_ERRORS = defineErrors({
  WEBHOOKS_NOT_CONFIGURED: {
    status: 400,
    message: 'This server delivers no webhooks: it has no signing secret, or webhooks are switched off',
    hint: 'The operator sets platform.webhooks.secret (or platform.webhooks.secret-file) and platform.webhooks.enabled'
  },
  WEBHOOK_URL_INVALID: {
    status: 400,
    message: (p) => `Invalid webhook URL: ${String(p.detail)}`,
    hint: 'An absolute http or https URL without user name or password, at most 2048 characters'
  },
  WEBHOOK_HOST_NOT_ALLOWED: {
    status: 400,
    message: (p) => `Webhook host '${String(p.host)}' is not on platform.webhooks.allowed-hosts`,
    hint: 'The operator lists the hosts webhooks may reach in platform.webhooks.allowed-hosts (loopback only by default)'
  },
  WEBHOOK_OUTBOX_FULL: {
    status: 429,
    message: (p) =>
      `Too many webhook deliveries waiting for ${String(p.owner)}: ${String(p.limit)} (platform.webhooks.max-pending-per-principal)`,
    hint: 'Deliveries leave the outbox when their receiver answers 2xx or their attempts run out'
  },
  WEBHOOK_OUTBOX_CAPACITY: {
    status: 503,
    message: (p) =>
      `Too many webhook deliveries waiting: the outbox holds its limit of ${String(p.limit)} (platform.webhooks.max-pending)`,
    hint: 'Deliveries leave the outbox when their receiver answers 2xx or their attempts run out'
  }
})
