import {
  usage,
  type AiErrorCode,
  type AiCancelSignal,
  type AiEvent,
  type AiMessage,
  type AiResponseFormat,
  type AiRuntime,
  type AiRuntimeRequest,
  type AiTextSink,
  type AiToolCall
} from './runtime.js'
import { parseSse } from './sse-lines.js'
import { WireToolNames } from './wire-tool-names.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { AI_ERRORS } from './errors.js'

export interface OpenAiRuntimeOptions {
  /** Base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string
  model: string
  apiKey?: string | undefined
  /** Bound of the whole request. */
  timeoutMs: number
  /** Bound of the silence before the first byte and between two chunks; a hung server ends here. */
  idleTimeoutMs: number
  maxConcurrency: number
}

/** A line longer than this is not a chat chunk; the stream is treated as garbage. */
const MAX_LINE_BYTES = 1024 * 1024

/** A failed turn (AI_UPSTREAM_FAILED): `aiCode` becomes the code of the error event the turn ends with. */
const failure = (aiCode: AiErrorCode, message: string): PlatformError =>
  new PlatformError(AI_ERRORS.AI_UPSTREAM_FAILED, { aiCode, detail: message })

/**
 * Any OpenAI-compatible `/v1/chat/completions` server, streamed: text deltas pass through as they
 * come, `tool_calls` deltas are assembled by index across chunks and emitted once complete (the
 * arguments must then parse as JSON), and usage comes from `stream_options.include_usage`.
 */
export class OpenAiRuntime implements AiRuntime {
  readonly name = 'openai'
  readonly priority = 10
  readonly capabilities = [
    'streaming',
    'tool-calling',
    'cancellation',
    'usage',
    'system-prompt',
    'image-input',
    'structured-output'
  ] as const
  readonly models: string[]
  private inFlight = 0

  constructor(private readonly opts: OpenAiRuntimeOptions) {
    this.models = opts.model === '' ? [] : [opts.model]
  }

  isAvailable(): boolean {
    return this.opts.baseUrl !== '' && this.opts.model !== ''
  }

  async *stream(request: AiRuntimeRequest, signal?: AiCancelSignal, onText?: AiTextSink): AsyncGenerator<AiEvent> {
    if (this.inFlight >= this.opts.maxConcurrency) {
      yield {
        type: 'error',
        code: 'capacity',
        message: `openai runtime: ${this.inFlight} requests in flight, the limit (platform.ai.openai.max-concurrency) is ${this.opts.maxConcurrency}`
      }
      return
    }
    this.inFlight++
    const ctl = new AbortController()
    let why: PlatformError | undefined
    const fail = (f: PlatformError): void => {
      if (why === undefined) {
        why = f
        ctl.abort()
      }
    }
    const onAbort = (): void => fail(failure('cancelled', 'cancelled by the caller'))
    if (signal?.aborted === true) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
    const url = this.opts.baseUrl.replace(/\/+$/, '') + '/chat/completions'
    const total = setTimeout(
      () => fail(failure('timeout', `${url} did not finish within ${this.opts.timeoutMs} ms`)),
      this.opts.timeoutMs
    )
    let idle: NodeJS.Timeout | undefined
    const touch = (): void => {
      clearTimeout(idle)
      idle = setTimeout(
        () => fail(failure('timeout', `${url} sent nothing for ${this.opts.idleTimeoutMs} ms`)),
        this.opts.idleTimeoutMs
      )
    }
    const model = request.model ?? this.opts.model
    // `<server>.<tool>` and other names OpenAI refuses travel under stand-ins, mapped back on the way in
    const names = new WireToolNames(toolNames(request))
    try {
      touch()
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' }
      if (this.opts.apiKey !== undefined && this.opts.apiKey !== '')
        headers.authorization = `Bearer ${this.opts.apiKey}`
      let res: Response
      try {
        res = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify(body(request, model, names)),
          signal: ctl.signal
        })
      } catch (err) {
        throw why ?? failure('network', `${url} unreachable: ${cause(err)}`)
      }
      if (res.status < 200 || res.status >= 300) {
        const text = await res.text().catch(() => '')
        throw failure(
          res.status === 429 || res.status === 503 ? 'capacity' : 'http',
          `${url} answered ${res.status}${snippet(text)}`
        )
      }
      if (res.body === null) throw failure('protocol', `${url} answered without a body`)
      const calls = new Map<number, { id: string; name: string; args: string }>()
      let finish: 'stop' | 'tool-calls' | 'length' = 'stop'
      let sawDone = false
      let reported = false
      try {
        for await (const data of parseSse(res.body, MAX_LINE_BYTES, touch, ctl.signal)) {
          // events already buffered must not outrun a cancellation or timeout
          if (why !== undefined) throw why
          if (data === '[DONE]') {
            sawDone = true
            break
          }
          let parsed: unknown
          try {
            parsed = JSON.parse(data)
          } catch {
            throw failure('protocol', `${url} sent a chunk that is not JSON${snippet(data)}`)
          }
          // a primitive has no `error`, so testing the shape first refuses the same chunks
          if (typeof parsed !== 'object' || parsed === null)
            throw failure('protocol', `${url} sent a chunk that is not an object${snippet(data)}`)
          const chunk = parsed as WireChunk
          if (chunk.error !== undefined)
            throw failure(
              'http',
              `${url} reported an error mid-stream: ${String(chunk.error?.message ?? JSON.stringify(chunk.error))}`
            )
          const out: AiEvent[] = []
          const u = chunk.usage
          if (u !== undefined && u !== null) {
            const input = Number(u.prompt_tokens ?? 0)
            const output = Number(u.completion_tokens ?? 0)
            out.push({
              type: 'usage',
              usage: usage(
                input,
                output,
                String(chunk.model ?? model),
                Number(u.prompt_tokens_details?.cached_tokens ?? 0),
                typeof u.total_tokens === 'number' ? u.total_tokens : undefined
              )
            })
            reported = true
          }
          for (const choice of (Array.isArray(chunk.choices) ? chunk.choices : []) as (WireChoice | null)[]) {
            const d = choice?.delta ?? {}
            if (typeof d.content === 'string' && d.content !== '') out.push({ type: 'text', delta: d.content })
            for (const tc of (Array.isArray(d.tool_calls) ? d.tool_calls : []) as WireToolCall[]) {
              const i = Number(tc.index ?? 0)
              const c = calls.get(i) ?? { id: '', name: '', args: '' }
              if (typeof tc.id === 'string') c.id = tc.id
              if (typeof tc.function?.name === 'string') c.name += tc.function.name
              if (typeof tc.function?.arguments === 'string') c.args += tc.function.arguments
              calls.set(i, c)
            }
            if (choice?.finish_reason === 'tool_calls') finish = 'tool-calls'
            else if (choice?.finish_reason === 'length') finish = 'length'
          }
          // a slow consumer is not a silent server: the idle bound pauses while events are handed over
          if (out.length > 0) {
            clearTimeout(idle)
            for (const e of out)
              if (onText === undefined || e.type !== 'text') yield e
              else {
                const held = give(onText, e.delta)
                if (held !== undefined) await held
              }
            touch()
          }
        }
      } catch (err) {
        if (err instanceof SinkThrew || isPlatformError(err, AI_ERRORS.AI_UPSTREAM_FAILED)) throw err
        if (isPlatformError(err, AI_ERRORS.AI_SSE_MALFORMED)) throw failure('protocol', `${url} sent ${err.message}`)
        throw why ?? failure('network', `${url} dropped the stream: ${cause(err)}`)
      }
      if (why !== undefined) throw why
      if (!sawDone) throw failure('network', `${url} closed the stream before [DONE]`)
      for (const [, c] of [...calls.entries()].sort((a, b) => a[0] - b[0]))
        yield { type: 'tool-call', call: toCall(c, url, names) }
      if (calls.size > 0) finish = 'tool-calls'
      if (!reported) yield { type: 'usage', usage: usage(0, 0, model) }
      yield { type: 'done', finishReason: finish }
    } catch (err) {
      if (err instanceof SinkThrew) throw err.thrown
      const f = isPlatformError(err, AI_ERRORS.AI_UPSTREAM_FAILED)
        ? err
        : (why ?? failure('runtime', (err as Error).message))
      yield { type: 'error', code: f.params.aiCode as AiErrorCode, message: f.message }
    } finally {
      clearTimeout(total)
      clearTimeout(idle)
      signal?.removeEventListener('abort', onAbort)
      ctl.abort()
      this.inFlight--
    }
  }
}

/** What the turn's text sink threw: carried past the stream's own failure handling, to its reader. */
class SinkThrew {
  constructor(readonly thrown: unknown) {}
}

/** Hands a delta to the sink; a promise when the sink holds the stream until it settles. */
function give(sink: AiTextSink, delta: string): Promise<void> | undefined {
  let held: void | Promise<void>
  try {
    held = sink(delta)
  } catch (thrown) {
    throw new SinkThrew(thrown)
  }
  if (held === undefined) return undefined
  return held.then(undefined, (thrown: unknown) => {
    throw new SinkThrew(thrown)
  })
}

/** The fields read from a streamed chat-completion chunk; the server is not trusted, so each is tested before use. */
interface WireChunk {
  error?: { message?: unknown } | null
  model?: unknown
  usage?: {
    prompt_tokens?: unknown
    completion_tokens?: unknown
    total_tokens?: unknown
    prompt_tokens_details?: { cached_tokens?: unknown } | null
  } | null
  choices?: unknown
}
interface WireChoice {
  delta?: { content?: unknown; tool_calls?: unknown } | null
  finish_reason?: unknown
}
interface WireToolCall {
  index?: unknown
  id?: unknown
  function?: { name?: unknown; arguments?: unknown } | null
}

function toCall(c: { id: string; name: string; args: string }, url: string, names: WireToolNames): AiToolCall {
  if (c.name === '') throw failure('protocol', `${url} sent a tool call without a name`)
  const name = names.fromWire(c.name)
  let args: unknown
  try {
    args = c.args.trim() === '' ? {} : JSON.parse(c.args)
  } catch {
    throw failure('protocol', `${url} sent arguments for tool '${name}' that are not JSON${snippet(c.args)}`)
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw failure('protocol', `${url} sent arguments for tool '${name}' that are not an object`)
  return { id: c.id, name, arguments: args as Record<string, unknown> }
}

/** Every tool name a request carries: its tools' and those of the calls in its history. */
function* toolNames(r: AiRuntimeRequest): Generator<string> {
  for (const t of r.tools ?? []) yield t.name
  for (const m of r.history ?? []) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) yield c.name
}

function body(r: AiRuntimeRequest, model: string, names: WireToolNames): Record<string, unknown> {
  const messages: unknown[] = []
  if (r.systemPrompt !== undefined && r.systemPrompt !== '') messages.push({ role: 'system', content: r.systemPrompt })
  for (const m of r.history ?? []) messages.push(wire(m, names))
  if (r.message !== undefined)
    messages.push({
      role: 'user',
      content:
        (r.images ?? []).length === 0
          ? r.message
          : [{ type: 'text', text: r.message }, ...r.images!.map((url) => ({ type: 'image_url', image_url: { url } }))]
    })
  const out: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } }
  if (r.maxOutputTokens !== undefined) out.max_tokens = r.maxOutputTokens
  if (r.responseFormat !== undefined) out.response_format = responseFormat(r.responseFormat)
  if ((r.tools ?? []).length > 0) {
    out.tools = r.tools!.map((t) => ({
      type: 'function',
      function: {
        name: names.toWire(t.name),
        description: t.description ?? '',
        parameters: t.inputSchema ?? { type: 'object', properties: {} }
      }
    }))
  }
  return out
}

/** Chat Completions' `response_format`: a schema goes inside `json_schema` with its name. */
function responseFormat(f: AiResponseFormat): Record<string, unknown> {
  if (f.type === 'json_object') return { type: 'json_object' }
  const { type, ...json_schema } = f
  return { type, json_schema }
}

function wire(m: AiMessage, names: WireToolNames): unknown {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
  if (m.role === 'assistant' && m.toolCalls !== undefined && m.toolCalls.length > 0) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: names.toWire(c.name), arguments: JSON.stringify(c.arguments) }
      }))
    }
  }
  return { role: m.role, content: m.content }
}

function cause(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } }
  return e.cause?.code ?? e.cause?.message ?? e.message
}

function snippet(text: string): string {
  const t = text.trim()
  return t === '' ? '' : `: ${t.length > 200 ? t.slice(0, 200) + '…' : t}`
}
