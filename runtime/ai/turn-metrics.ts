/**
 * Counters of AI turns in the platform's prom-client registry, counted from the events every turn
 * yields (whichever endpoint runs it: agent chat, AG-UI, interactions, MCP).
 */
import { Counter, type Registry } from 'prom-client'
import { TimedMetric } from '../observability/index.js'
import type { TurnEvent } from './turn-types.js'

export class TurnMetrics {
  private readonly prompts: Counter
  private readonly texts: Counter
  private readonly errors: Counter<'code'>
  private readonly toolCalls: Counter
  private readonly duration: TimedMetric

  constructor(registry: Registry) {
    const registers = [registry]
    this.prompts = new Counter({ name: 'platform_ai_prompts_total', help: 'AI turns started', registers })
    this.texts = new Counter({
      name: 'platform_ai_streaming_texts_total',
      help: 'Text chunks AI turns streamed',
      registers
    })
    this.errors = new Counter({
      name: 'platform_ai_errors_total',
      help: 'AI turns that ended with an error, by code',
      labelNames: ['code'],
      registers
    })
    this.toolCalls = new Counter({ name: 'platform_ai_tool_calls_total', help: 'Tool calls AI turns made', registers })
    this.duration = new TimedMetric(
      registry,
      'platform_ai_turn_seconds',
      'Duration of an AI turn, from its start to its last event',
      [0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120]
    )
  }

  /** Passes `events` through, counting them; the duration ends when the turn does (also when its reader stops). */
  async *count(events: AsyncIterable<TurnEvent>): AsyncGenerator<TurnEvent> {
    const started = performance.now()
    this.prompts.inc()
    try {
      for await (const e of events) {
        if (e.type === 'text') this.texts.inc()
        else if (e.type === 'tool-start') this.toolCalls.inc()
        else if (e.type === 'error') this.errors.inc({ code: e.code })
        yield e
      }
    } finally {
      this.duration.observe((performance.now() - started) / 1000)
    }
  }
}
