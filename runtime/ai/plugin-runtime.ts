import type { RegisteredRuntime } from '../plugins/index.js'
import {
  usage,
  type AiCapability,
  type AiCancelSignal,
  type AiEvent,
  type AiRuntime,
  type AiRuntimeRequest,
  type AiToolCall
} from './runtime.js'

const CAPABILITIES = new Set<AiCapability>(['streaming', 'tool-calling', 'cancellation', 'usage', 'system-prompt'])
const FINISH = new Set(['stop', 'tool-calls', 'length', 'cancelled'])

/**
 * A runtime a plugin contributes, run in the plugin's sandbox like any contribution. Events come
 * from the sandbox as the plugin yields them (the host pulls, so a plugin that floods waits) and
 * each is checked before it goes on, so a plugin cannot break the contract: a malformed event ends
 * the stream with one error event, after what was already good. Cancellation reaches the plugin as
 * `ctx.signal` and as `return()` on its generator, and ends this stream at once.
 */
export class PluginRuntime implements AiRuntime {
  readonly name: string
  readonly priority: number
  readonly capabilities: AiCapability[]
  readonly models: string[]

  constructor(private readonly r: RegisteredRuntime) {
    this.name = r.name
    this.priority = r.priority
    this.capabilities = r.capabilities.filter((c): c is AiCapability => CAPABILITIES.has(c as AiCapability))
    this.models = r.models.length > 0 ? r.models : [r.name]
  }

  isAvailable(): boolean {
    return true
  }

  async *stream(request: AiRuntimeRequest, signal?: AiCancelSignal): AsyncGenerator<AiEvent> {
    if (isAborted(signal)) {
      yield { type: 'done', finishReason: 'cancelled' }
      return
    }
    const where = `plugin runtime '${this.name}' (plugin ${this.r.plugin})`
    const checker = new EventChecker(request.model ?? this.models[0]!)
    const raw = this.r.stream(request, signal === undefined ? {} : { signal })
    try {
      for (;;) {
        let r: IteratorResult<unknown>
        try {
          r = await raw.next()
        } catch (err) {
          if (isAborted(signal)) break
          yield { type: 'error', code: 'runtime', message: `${where} failed: ${(err as Error).message}` }
          return
        }
        if (isAborted(signal)) break
        let out: AiEvent[]
        try {
          out = r.done === true ? checker.end() : checker.take(r.value)
        } catch (err) {
          yield {
            type: 'error',
            code: 'protocol',
            message: `${where} broke the runtime contract: ${(err as Error).message}`
          }
          return
        }
        for (const e of out) yield e
        if (checker.ended) return
      }
      yield { type: 'done', finishReason: 'cancelled' }
    } finally {
      // the consumer stopped, the stream ended or broke: the plugin's generator is closed either way
      void raw.return?.()
    }
  }
}

/** Checks and normalises a plugin's events one by one: one terminal event at the end, a usage before it. */
class EventChecker {
  ended = false
  private sawUsage = false
  private calls = 0
  private i = 0

  constructor(private readonly model: string) {}

  take(e: unknown): AiEvent[] {
    const i = this.i++
    const ev = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>
    const type = ev.type
    if (type === 'text' && typeof ev.delta === 'string') return [{ type: 'text', delta: ev.delta }]
    if (type === 'tool-call') {
      this.calls++
      return [{ type: 'tool-call', call: toolCall(ev.call, i) }]
    }
    if (type === 'usage' && !this.sawUsage) {
      this.sawUsage = true
      return [{ type: 'usage', usage: this.usage(ev.usage, i) }]
    }
    if (type === 'done') {
      const fr = ev.finishReason ?? (this.calls > 0 ? 'tool-calls' : 'stop')
      if (typeof fr !== 'string' || !FINISH.has(fr)) throw new Error(`event ${i}: unknown finishReason '${String(fr)}'`)
      const out: AiEvent[] = []
      if (!this.sawUsage) out.push({ type: 'usage', usage: usage(0, 0, this.model) })
      this.sawUsage = true
      this.ended = true
      out.push({ type: 'done', finishReason: fr as 'stop' })
      return out
    }
    if (type === 'error' && typeof ev.message === 'string') {
      this.ended = true
      return [{ type: 'error', code: 'runtime', message: ev.message }]
    }
    throw new Error(`event ${i} is not a runtime event: ${JSON.stringify(e)?.slice(0, 120)}`)
  }

  /** The plugin's stream ended: without a terminal event that breaks the contract. */
  end(): AiEvent[] {
    throw new Error('the events do not end with done or error')
  }

  private usage(raw: unknown, i: number): ReturnType<typeof usage> {
    const u = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>
    const n = (k: string): number => {
      const v = u[k] ?? 0
      if (!Number.isInteger(v) || (v as number) < 0) throw new Error(`event ${i}: usage.${k} is not a count`)
      return v as number
    }
    return usage(
      n('input'),
      n('output'),
      typeof u.model === 'string' && u.model !== '' ? u.model : this.model,
      n('cachedInput'),
      u.total === undefined ? undefined : n('total')
    )
  }
}

function toolCall(raw: unknown, i: number): AiToolCall {
  const c = (typeof raw === 'object' ? raw : null) as { id?: unknown; name?: unknown; arguments?: unknown } | null
  if (c === null || typeof c.id !== 'string' || c.id === '' || typeof c.name !== 'string' || c.name === '')
    throw new Error(`event ${i}: a tool call needs a non-empty id and name`)
  const args = c.arguments ?? {}
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new Error(`event ${i}: tool call '${c.name}' arguments are not an object`)
  return { id: c.id, name: c.name, arguments: args as Record<string, unknown> }
}

// a function, not an inline test, so the compiler does not narrow `aborted` across awaits
function isAborted(signal: AiCancelSignal | undefined): boolean {
  return signal?.aborted === true
}
