import {
  usage,
  type AiCancelSignal,
  type AiEvent,
  type AiMessage,
  type AiRuntime,
  type AiRuntimeRequest,
  type AiTextSink,
  type AiToolSpec
} from './runtime.js'
import { WordPacer, Words } from './demo-words.js'

/**
 * The default runtime: offline and deterministic (same request, same events). It picks a tool
 * when the message shares a word with the tool's name, description or an enum value of its
 * arguments, answers from the tool's result once that is in the history, and otherwise answers
 * in the part the system prompt gives it (never quoting the prompt: an agent's instructions are
 * not for its users). Tokens are whitespace-separated words, so usage is reproducible.
 */
export class DemoRuntime implements AiRuntime {
  readonly name = 'demo'
  readonly priority = 0
  readonly capabilities = ['streaming', 'tool-calling', 'cancellation', 'usage', 'system-prompt'] as const
  readonly models = ['demo-1']

  private tick: Promise<void> | undefined
  private readonly pacer = new WordPacer()

  isAvailable(): boolean {
    return true
  }

  /**
   * Resolves in the next event-loop turn (its check phase), one promise and one Immediate shared
   * by every answer in flight: a word per answer per turn as before, without a promise, a closure
   * and an Immediate per word. An answer that asks again while the shared one settles gets the
   * next turn's.
   */
  private nextTurn(): Promise<void> {
    this.tick ??= new Promise<void>((resolve) => {
      setImmediate(() => {
        this.tick = undefined
        resolve()
      })
    })
    return this.tick
  }

  // returns the generator of its answer rather than delegating to it: a generator in between
  // would be one more promise and microtask per word
  stream(request: AiRuntimeRequest, signal?: AiCancelSignal, onText?: AiTextSink): AsyncGenerator<AiEvent> {
    const model = request.model ?? this.models[0]!
    const input = promptTokens(request)
    const history = request.history ?? []
    const last = history[history.length - 1]
    const answer = (text: string, max = Infinity): AsyncGenerator<AiEvent> =>
      onText === undefined
        ? this.words(text, input, model, signal, max)
        : this.pushed(text, input, model, onText, signal, max)
    if (request.message === undefined && last?.role === 'tool')
      return answer(`According to ${last.name ?? 'the tool'}: ${last.content}`)
    const message = request.message ?? lastUser(history) ?? ''
    const call = pickTool(message, request.tools ?? [])
    if (call !== undefined) return this.toolCall(message, call, input, model, signal)
    return answer(`You said: "${message}".${persona(request)}`, request.maxOutputTokens)
  }

  private async *toolCall(
    message: string,
    call: { name: string; args: Record<string, unknown> },
    input: number,
    model: string,
    signal?: AiCancelSignal
  ): AsyncGenerator<AiEvent> {
    if (signal?.aborted === true) {
      yield { type: 'done', finishReason: 'cancelled' }
      return
    }
    const id = `call_${hash(message + call.name)}`
    yield { type: 'tool-call', call: { id, name: call.name, arguments: call.args } }
    yield { type: 'usage', usage: usage(input, countTokens(call.name + ' ' + JSON.stringify(call.args)), model) }
    yield { type: 'done', finishReason: 'tool-calls' }
  }

  private async *words(
    text: string,
    input: number,
    model: string,
    signal: AiCancelSignal | undefined,
    max: number
  ): AsyncGenerator<AiEvent> {
    const words = new Words(text)
    do {
      if (words.sent >= max) {
        yield { type: 'usage', usage: usage(input, words.sent, model) }
        yield { type: 'done', finishReason: 'length' }
        return
      }
      // yield to the event loop between words so a cancellation can land mid-stream
      await this.nextTurn()
      if (signal?.aborted === true) {
        yield* this.ending('cancelled', words, input, model)
        return
      }
      yield { type: 'text', delta: words.next() }
    } while (!words.done)
    yield* this.ending('stop', words, input, model)
  }

  /** The answer's words handed to `onText` (see WordPacer), then its usage and finish as events. */
  private async *pushed(
    text: string,
    input: number,
    model: string,
    onText: AiTextSink,
    signal: AiCancelSignal | undefined,
    max: number
  ): AsyncGenerator<AiEvent> {
    const words = new Words(text)
    const end = await this.pacer.push(words, onText, max, signal)
    if (typeof end === 'object') throw end.thrown
    yield* this.ending(end, words, input, model)
  }

  private *ending(
    end: 'stop' | 'length' | 'cancelled',
    words: Words,
    input: number,
    model: string
  ): Generator<AiEvent> {
    // what it sent: each word once, a lone whitespace delta not (nor the empty delta of an empty answer)
    const output = words.text === '' ? 0 : words.sent
    yield { type: 'usage', usage: usage(input, output, model) }
    yield { type: 'done', finishReason: end }
  }
}

/**
 * What an agent with a system prompt adds after repeating the message, without quoting the prompt:
 * with tools, what it can look up (a guide); with a role ("You are the critic."), an answer in that
 * role; otherwise nothing.
 */
function persona(request: AiRuntimeRequest): string {
  if (request.systemPrompt === undefined || request.systemPrompt.trim() === '') return ''
  const tools = request.tools ?? []
  if (tools.length > 0) {
    const topics = tools.flatMap((t) =>
      Object.values((t.inputSchema?.properties ?? {}) as Record<string, { enum?: unknown[] }>).flatMap((p) =>
        (p.enum ?? []).filter((v): v is string => typeof v === 'string')
      )
    )
    return topics.length > 0
      ? ` I can look up ${[...new Set(topics)].join(', ')}: ask about one of them.`
      : ` I can answer with ${tools.map((t) => t.name).join(', ')}: ask me something one of them does.`
  }
  const role = /\byou are (?:the |an? )?([a-z][a-z -]{0,39}?)[.,;:!]/i.exec(request.systemPrompt)?.[1]?.trim()
  if (role === undefined) return ''
  return ` As the ${role}: a good answer says what it is, how to set it up here, and what can go wrong.`
}

/** What `\s` matches (and `trim` removes): the demo's word separators. */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13)
  if (c < 160) return false
  return (
    c === 160 ||
    c === 5760 ||
    (c >= 8192 && c <= 8202) ||
    c === 8232 ||
    c === 8233 ||
    c === 8239 ||
    c === 8287 ||
    c === 12288 ||
    c === 65279
  )
}

/**
 * Whitespace-separated words: the demo's documented tokenisation. Counted in place: a turn counts
 * its prompt and its answer, and splitting them made an array of every word twice per turn.
 */
export function countTokens(text: string): number {
  let n = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i))
    if (!space && !inWord) n++
    inWord = !space
  }
  return n
}

/**
 * The tokens of the system prompt, the history and the message, as if joined by spaces: counted
 * part by part, since a space between two parts never joins two words into one.
 */
function promptTokens(r: AiRuntimeRequest): number {
  let n = countTokens(r.systemPrompt ?? '') + countTokens(r.message ?? '')
  for (const m of r.history ?? []) n += countTokens(m.content)
  return n
}

function lastUser(history: AiMessage[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!
    if (m.role === 'user') return m.content
  }
  return undefined
}

const STOP = new Set([
  'about',
  'what',
  'which',
  'where',
  'does',
  'there',
  'their',
  'with',
  'from',
  'that',
  'this',
  'have',
  'tell',
  'short',
  'returns',
  'lists',
  'knows',
  'platform'
])

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 4 && !STOP.has(w))
}

/** Two words relate when one is a prefix of the other (sandbox / sandboxes). */
function related(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a)
}

function pickTool(message: string, tools: AiToolSpec[]): { name: string; args: Record<string, unknown> } | undefined {
  // no tool to pick: the message is not cut into words (a long prompt cost a turn more than its reply's framing)
  if (tools.length === 0) return undefined
  const said = words(message)
  if (said.length === 0) return undefined
  let best: { name: string; args: Record<string, unknown>; score: number } | undefined
  for (const t of tools) {
    const props = (t.inputSchema?.properties ?? {}) as Record<string, { enum?: unknown[] }>
    const required = new Set((t.inputSchema?.required ?? []) as string[])
    const args: Record<string, unknown> = {}
    let score = 0
    let complete = true
    for (const [prop, s] of Object.entries(props)) {
      const hit = (s.enum ?? []).find((v) => typeof v === 'string' && said.some((w) => related(w, v.toLowerCase())))
      if (hit !== undefined) {
        args[prop] = hit
        score += 2
      } else if (required.has(prop)) complete = false
    }
    if (!complete) continue
    score += words(`${t.name} ${t.description ?? ''}`).filter((w) => said.some((s) => related(s, w))).length
    if (score > 0 && (best === undefined || score > best.score)) best = { name: t.name, args, score }
  }
  return best
}

function hash(s: string): string {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 16777619)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}
