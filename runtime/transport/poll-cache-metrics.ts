import { Counter, Gauge, type Registry } from 'prom-client'

/** Why held messages were lost: the client's queue passed its cap, or the client went first. */
export type DropReason = 'overflow' | 'closed'

/**
 * The long-polling message cache in prom-client: messages the transport holds for a client
 * between its polls. Held = added − delivered − dropped at any moment. A message that finds a poll
 * waiting is answered at once and never counted here. The delivery path only adds to plain
 * numbers (a fan-out to many clients would otherwise pay a metric update per client); the
 * registry reads them when it is collected.
 */
export class PollCacheMetrics {
  private held = 0
  private added = 0
  private delivered = 0
  private readonly dropped: Record<DropReason, number> = { overflow: 0, closed: 0 }

  constructor(registry: Registry) {
    const registers = [registry]
    const held = (): number => this.held
    const dropped = (reason: DropReason): number => this.dropped[reason]
    new Gauge({
      name: 'platform_long_polling_cached_messages',
      help: 'Messages held now for long-polling clients between their polls',
      registers,
      collect() {
        this.set(held())
      }
    })
    const counter = (name: string, help: string, value: () => number): void => {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset()
          this.inc(value())
        }
      })
    }
    counter(
      'platform_long_polling_cache_added_total',
      'Messages held for a long-polling client because no poll of its was waiting',
      () => this.added
    )
    counter(
      'platform_long_polling_cache_delivered_total',
      'Held messages a later poll of their client collected',
      () => this.delivered
    )
    new Counter({
      name: 'platform_long_polling_cache_dropped_total',
      help: 'Held messages lost, by reason: overflow (the client passed its queue cap and was disconnected) or closed (it left, timed out or was disconnected before polling again)',
      labelNames: ['reason'],
      registers,
      collect() {
        this.reset()
        for (const reason of ['overflow', 'closed'] as const) this.inc({ reason }, dropped(reason))
      }
    })
  }

  /** `n` messages now wait for their client's next poll. */
  hold(n: number): void {
    this.held += n
    this.added += n
  }

  /** `n` held messages went out in a poll's answer. */
  deliver(n: number): void {
    this.held -= n
    this.delivered += n
  }

  /** `n` held messages were discarded with their client. */
  drop(reason: DropReason, n: number): void {
    this.held -= n
    this.dropped[reason] += n
  }
}
