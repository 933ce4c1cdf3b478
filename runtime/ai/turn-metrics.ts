/**
 * Counters of AI turns in the platform's prom-client registry, counted from the events every turn
 * yields (whichever endpoint runs it: agent chat, AG-UI, interactions, MCP).
 */
import { Counter, type Registry } from 'prom-client'
import { TimedMetric } from '../observability/index.js'
import type { TurnEvent } from './turn-types.js'

/**
 * A counter kept in a plain number and handed to prom-client when it is read (a scrape, the
 * admin metrics): an `inc()` per streamed token cost more than the rest of the token's counting.
 */
function lazyCounter(registry: Registry, name: string, help: string): { n: number } {
  const count = { n: 0 }
  let reported = 0
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      if (count.n !== reported) this.inc(count.n - reported)
      reported = count.n
    }
  })
  return count
}

export class TurnMetrics {
  private readonly prompts: { n: number }
  private readonly texts: { n: number }
  private readonly toolCalls: { n: number }
  private readonly errors: Counter<'code'>
  private readonly duration: TimedMetric

  constructor(registry: Registry) {
    this.prompts = lazyCounter(registry, 'platform_ai_prompts_total', 'AI turns started')
    this.texts = lazyCounter(registry, 'platform_ai_streaming_texts_total', 'Text chunks AI turns streamed')
    this.toolCalls = lazyCounter(registry, 'platform_ai_tool_calls_total', 'Tool calls AI turns made')
    this.errors = new Counter({
      name: 'platform_ai_errors_total',
      help: 'AI turns that ended with an error, by code',
      labelNames: ['code'],
      registers: [registry]
    })
    this.duration = new TimedMetric(
      registry,
      'platform_ai_turn_seconds',
      'Duration of an AI turn, from its start to its last event',
      [0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120]
    )
  }

  /** A turn started. */
  started(): void {
    this.prompts.n++
  }

  /** One text delta a turn streamed to its reader's sink rather than as an event. */
  text(): void {
    this.texts.n++
  }

  /** One event of a turn. */
  event(e: TurnEvent): void {
    if (e.type === 'text') this.texts.n++
    else if (e.type === 'tool-start') this.toolCalls.n++
    else if (e.type === 'error') this.errors.inc({ code: e.code })
  }

  /** The turn ended (also when its reader stopped): how long it ran. */
  ended(seconds: number): void {
    this.duration.observe(seconds)
  }
}
