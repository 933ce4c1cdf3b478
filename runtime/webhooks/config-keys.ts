/**
 * The configuration keys the webhooks area owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { bool, nonEmpty, positiveInt, strList } = KEY_SCHEMA

export const WEBHOOKS_CONFIG_KEYS = {
  'platform.webhooks.enabled': {
    schema: bool,
    default: true,
    description:
      'Deliver webhooks (interaction webhooks, A2A push notifications); they also need platform.webhooks.secret or platform.webhooks.secret-file'
  },
  'platform.webhooks.secret': {
    schema: nonEmpty,
    secret: true,
    description:
      'Key of the `webhook-signature` HMAC-SHA256 (Standard Webhooks): `whsec_<base64>` or any string of at least 24 characters; best set as PLATFORM_WEBHOOKS_SECRET. Unset (and no secret-file): no webhook is accepted'
  },
  'platform.webhooks.secret-file': {
    schema: nonEmpty,
    description: 'A file holding platform.webhooks.secret (surrounding whitespace ignored); setting both stops start-up'
  },
  'platform.webhooks.allowed-hosts': {
    schema: strList,
    default: ['localhost', '127.0.0.1', '::1'],
    description:
      'Hosts a webhook URL may name: a host name, `*.<domain>`, `*` (any name), an IP address or a CIDR range. A name resolving to a private, loopback or link-local address is refused at delivery unless that address is listed as an IP or range'
  },
  'platform.webhooks.timeout-ms': {
    schema: positiveInt,
    default: 10_000,
    description: 'One delivery attempt (connect, send, answer) taking longer fails and is retried'
  },
  'platform.webhooks.max-attempts': {
    schema: positiveInt,
    default: 8,
    description: 'Attempts per delivery before it is given up and listed among the failures'
  },
  'platform.webhooks.retry-base-ms': {
    schema: positiveInt,
    default: 2_000,
    description:
      'Wait before the first retry; each retry waits twice the previous (with up to half of it taken off at random), at most platform.webhooks.retry-max-ms'
  },
  'platform.webhooks.retry-max-ms': {
    schema: positiveInt,
    default: 600_000,
    description: "Longest wait between two attempts, a receiver's Retry-After included"
  },
  'platform.webhooks.max-pending': {
    schema: positiveInt,
    default: 10_000,
    description: 'Deliveries the outbox keeps at once (waiting or retrying); beyond it a new webhook is refused (503)'
  },
  'platform.webhooks.max-pending-per-principal': {
    schema: positiveInt,
    default: 200,
    description:
      'Deliveries of one principal (anonymous callers: of one client address) the outbox keeps at once; beyond it a new webhook is refused (429)'
  },
  'platform.webhooks.concurrency': {
    schema: positiveInt,
    default: 8,
    description: 'Delivery attempts in flight at once'
  },
  'platform.webhooks.failures-kept': {
    schema: positiveInt,
    default: 1_000,
    description: 'Given-up deliveries kept for GET /api/admin/webhooks (oldest trimmed)'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof WEBHOOKS_CONFIG_KEYS> {}
}
