import { Counter, Gauge, type Registry } from 'prom-client'

/** Why held messages were lost: the client's queue passed its cap, or the client went first. */
export type DropReason = 'overflow' | 'closed'

/**
 * The long-polling message cache in prom-client: messages the transport holds for a client
 * between its polls. Held = added − delivered − dropped at any moment. A message that finds a poll
 * waiting is answered at once and never counted here.
 */
export class PollCacheMetrics {
  readonly held: Gauge
  readonly added: Counter
  readonly delivered: Counter
  readonly dropped: Counter<'reason'>

  constructor(registry: Registry) {
    const registers = [registry]
    this.held = new Gauge({
      name: 'platform_long_polling_cached_messages',
      help: 'Messages held now for long-polling clients between their polls',
      registers
    })
    this.added = new Counter({
      name: 'platform_long_polling_cache_added_total',
      help: 'Messages held for a long-polling client because no poll of its was waiting',
      registers
    })
    this.delivered = new Counter({
      name: 'platform_long_polling_cache_delivered_total',
      help: 'Held messages a later poll of their client collected',
      registers
    })
    this.dropped = new Counter({
      name: 'platform_long_polling_cache_dropped_total',
      help: 'Held messages lost, by reason: overflow (the client passed its queue cap and was disconnected) or closed (it left, timed out or was disconnected before polling again)',
      labelNames: ['reason'],
      registers
    })
  }
}
