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
 * A runtime a plugin contributes, run in the plugin's sandbox like any contribution. The sandbox
 * hands back the whole event list when the plugin's `stream` ends (one batch, the same in the
 * isolate, worker and inline tiers); this replays it as a stream after checking every event, so
 * a plugin cannot break the contract: anything malformed becomes one error event. Cancellation
 * goes to the plugin as `ctx.signal` and ends the stream at once.
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
    let raw: unknown
    // the sandbox takes an AbortSignal or a Cancellation; bridge whatever shape the caller holds
    const ctl = new AbortController()
    const onAbort = (): void => ctl.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      raw = await this.r.stream(request, { signal: ctl.signal })
    } catch (err) {
      if (isAborted(signal)) {
        yield { type: 'done', finishReason: 'cancelled' }
        return
      }
      yield { type: 'error', code: 'runtime', message: `${where} failed: ${(err as Error).message}` }
      return
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
    if (isAborted(signal)) {
      yield { type: 'done', finishReason: 'cancelled' }
      return
    }
    let events: AiEvent[]
    try {
      events = check(raw, request.model ?? this.models[0]!)
    } catch (err) {
      yield {
        type: 'error',
        code: 'protocol',
        message: `${where} broke the runtime contract: ${(err as Error).message}`
      }
      return
    }
    for (const e of events) {
      if (isAborted(signal)) {
        yield { type: 'done', finishReason: 'cancelled' }
        return
      }
      yield e
    }
  }
}

/** The plugin's events, checked and normalised; ends in exactly one terminal event, a usage before it. */
function check(raw: unknown, model: string): AiEvent[] {
  if (!Array.isArray(raw)) throw new Error('stream() did not produce a list of events')
  const out: AiEvent[] = []
  let sawUsage = false
  let calls = 0
  for (const [i, e] of raw.entries()) {
    if (out.length > 0 && (out[out.length - 1]!.type === 'done' || out[out.length - 1]!.type === 'error'))
      throw new Error(`event ${i} comes after the terminal event`)
    const type = (e as { type?: unknown } | null)?.type
    if (type === 'text' && typeof e.delta === 'string') out.push({ type: 'text', delta: e.delta })
    else if (type === 'tool-call') {
      out.push({ type: 'tool-call', call: toolCall(e.call, i) })
      calls++
    } else if (type === 'usage' && !sawUsage) {
      const u = e.usage ?? {}
      const n = (k: string): number => {
        const v = u[k] ?? 0
        if (!Number.isInteger(v) || v < 0) throw new Error(`event ${i}: usage.${k} is not a count`)
        return v
      }
      out.push({
        type: 'usage',
        usage: usage(
          n('input'),
          n('output'),
          typeof u.model === 'string' && u.model !== '' ? u.model : model,
          n('cachedInput'),
          u.total === undefined ? undefined : n('total')
        )
      })
      sawUsage = true
    } else if (type === 'done') {
      if (!sawUsage) {
        out.push({ type: 'usage', usage: usage(0, 0, model) })
        sawUsage = true
      }
      const fr = e.finishReason ?? (calls > 0 ? 'tool-calls' : 'stop')
      if (!FINISH.has(fr)) throw new Error(`event ${i}: unknown finishReason '${String(fr)}'`)
      out.push({ type: 'done', finishReason: fr })
    } else if (type === 'error' && typeof e.message === 'string')
      out.push({ type: 'error', code: 'runtime', message: e.message })
    else throw new Error(`event ${i} is not a runtime event: ${JSON.stringify(e)?.slice(0, 120)}`)
  }
  const last = out[out.length - 1]
  if (last === undefined || (last.type !== 'done' && last.type !== 'error'))
    throw new Error('the events do not end with done or error')
  return out
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
