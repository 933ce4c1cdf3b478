/**
 * `GET /api/admin/webhooks`: what the outbox holds (waiting, retrying, held), each delivery's last
 * attempt, and the deliveries given up. URLs are shown without their query (it may carry a
 * client's secret), and the headers a client gave (its token) never. An operator read: a principal
 * with `platform.admin.required-role`, whatever the read flags say.
 */
import type { Platform } from '../platform.js'
import type { AdminRoute } from '../admin/index.js'
import type { AttemptRecord, Outbox, StoredDelivery } from './outbox.js'

const iso = (ms: number): string => new Date(ms).toISOString()

/** A URL as the admin shows it: origin and path. */
function shownUrl(raw: string): string {
  try {
    const u = new URL(raw)
    return `${u.origin}${u.pathname}`
  } catch {
    return '(invalid)'
  }
}

/** What the admin shows of any delivery, waiting or given up. */
const shown = (d: Omit<StoredDelivery, 'body' | 'headers'>) => ({
  id: d.id,
  source: d.source,
  ref: d.ref,
  owner: d.owner,
  url: shownUrl(d.url),
  createdAt: iso(d.createdAt)
})

const attempt = (a: AttemptRecord | undefined): Record<string, unknown> | null =>
  a === undefined
    ? null
    : {
        at: iso(a.at),
        ...(a.status !== undefined ? { status: a.status } : {}),
        ...(a.error !== undefined ? { error: a.error } : {})
      }

export function webhookRoutes(platform: Platform, outbox: Outbox, ready: () => boolean): AdminRoute[] {
  const { config } = platform
  return [
    {
      method: 'GET',
      path: '/webhooks',
      summary: 'Webhook deliveries waiting in the outbox, their last attempts, and the ones given up',
      // the outbox names every client's receivers
      gate: { read: 'operator' },
      query: {
        type: 'object',
        properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } }
      },
      handler: (req) => {
        const limit = req.query.limit as number
        return {
          ready: ready(),
          ...outbox.stats,
          limits: {
            maxPending: config.get('platform.webhooks.max-pending'),
            maxPendingPerPrincipal: config.get('platform.webhooks.max-pending-per-principal'),
            maxAttempts: config.get('platform.webhooks.max-attempts')
          },
          waiting: outbox.pending(limit).map((d) => ({
            ...shown(d),
            held: d.held,
            inFlight: d.inFlight,
            attempts: d.attempts,
            nextAttemptAt: d.held ? null : iso(d.nextAt),
            lastAttempt: attempt(d.last)
          })),
          failures: outbox.failures(limit).map((d) => ({
            ...shown(d),
            failedAt: iso(d.failedAt),
            attempts: d.attempts,
            lastAttempt: attempt(d.last)
          }))
        }
      }
    }
  ]
}
