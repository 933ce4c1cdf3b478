import { PlatformError } from '../contracts/index.js'
import type { TurnAsk } from './api.js'
import { invalid, isObject, parseInput, unsupported } from './response-input.js'
import { parseResponseRequest } from './response-request.js'
import { parseChatFormat } from './response-format.js'

/** A `POST /v1/chat/completions` body, checked, as the turn it asks for. */
export interface ChatRequest extends TurnAsk {
  /** `stream_options.include_usage`: a last chunk carries the usage. */
  includeUsage: boolean
}

// accepted and not applied: sampling hints no runtime here takes (docs/openai-api.md says so)
const IGNORED = [
  'temperature',
  'top_p',
  'user',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'parallel_tool_calls',
  'safety_identifier',
  'prompt_cache_key'
]
const KEYS = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'n',
  'tools',
  'tool_choice',
  'max_tokens',
  'max_completion_tokens',
  'metadata',
  'store',
  'response_format',
  ...IGNORED
])

/**
 * Checks a chat body: its messages become Responses input items (system and developer texts, user
 * text and images, assistant text and tool calls, tool results), then the same checks apply. A
 * refusal names the chat parameter (`messages[n]`), not the item it became.
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw invalid('body', 'the body must be a JSON object')
  for (const k of Object.keys(body)) if (!KEYS.has(k)) throw unsupported(k, 'unknown parameter')
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw unsupported('n', 'one choice per request (n: 1)')
  const { messages } = body
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalid('messages', "'messages' must be a non-empty list")
  const from: number[] = []
  const input: unknown[] = []
  messages.forEach((m, n) => {
    for (const item of items(m, `messages[${n}]`)) {
      from.push(n)
      input.push(item)
    }
  })
  const so = body.stream_options
  if (
    so !== undefined &&
    so !== null &&
    !(isObject(so) && (so.include_usage === undefined || typeof so.include_usage === 'boolean'))
  )
    throw invalid('stream_options', "'stream_options' must be { include_usage: boolean }")
  const max = body.max_completion_tokens ?? body.max_tokens
  const responseFormat = parseChatFormat(body.response_format)
  const tools = body.tools === undefined || body.tools === null ? undefined : chatTools(body.tools)
  try {
    parseInput(input, [])
    const req = parseResponseRequest({
      model: body.model,
      input,
      stream: body.stream,
      store: body.store,
      metadata: body.metadata,
      ...(max !== undefined && max !== null ? { max_output_tokens: max } : {}),
      ...(tools !== undefined ? { tools } : {}),
      ...(body.tool_choice !== undefined ? { tool_choice: body.tool_choice } : {})
    })
    return { ...req, responseFormat, includeUsage: isObject(so) && so.include_usage === true }
  } catch (err) {
    throw inChatTerms(err, from)
  }
}

/** A refusal of the checked request (the model, images, the format) in the chat parameters' names. */
export function inChatParams(err: unknown): unknown {
  return inChatTerms(err, [])
}

/** One chat message as the Responses input items it stands for. */
function items(m: unknown, at: string): unknown[] {
  if (!isObject(m)) throw invalid(at, 'a message must be an object')
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      return [{ type: 'message', role: m.role, content: content(m.content, `${at}.content`) }]
    case 'assistant': {
      const out: unknown[] = []
      if (typeof m.content === 'string' && m.content !== '')
        out.push({ type: 'message', role: 'assistant', content: m.content })
      else if (m.content !== undefined && m.content !== null && typeof m.content !== 'string')
        throw invalid(`${at}.content`, "an assistant message's content must be a string")
      const calls = m.tool_calls
      if (calls !== undefined && calls !== null) {
        if (!Array.isArray(calls)) throw invalid(`${at}.tool_calls`, "'tool_calls' must be a list")
        calls.forEach((c, k) => {
          if (!isObject(c) || c.type !== 'function' || !isObject(c.function))
            throw invalid(
              `${at}.tool_calls[${k}]`,
              "a tool call is { id, type: 'function', function: { name, arguments } }"
            )
          out.push({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments })
        })
      }
      if (out.length === 0) throw invalid(at, 'an assistant message needs content or tool_calls')
      return out
    }
    case 'tool':
      return [{ type: 'function_call_output', call_id: m.tool_call_id, output: m.content }]
    default:
      throw invalid(`${at}.role`, "the role must be 'system', 'developer', 'user', 'assistant' or 'tool'")
  }
}

/** Chat content parts (`text`, `image_url`) as Responses parts. */
function content(c: unknown, at: string): unknown {
  if (!Array.isArray(c)) return c
  return c.map((p, n) => {
    if (!isObject(p)) throw invalid(`${at}[${n}]`, 'a content part must be an object')
    if (p.type === 'text') return { type: 'input_text', text: p.text }
    if (p.type === 'image_url') {
      const url = isObject(p.image_url) ? p.image_url.url : undefined
      return { type: 'input_image', image_url: url }
    }
    throw unsupported(`${at}[${n}].type`, `'${String(p.type)}' parts`)
  })
}

/** Chat tools (`{ type: 'function', function: {...} }`) as Responses function tools. */
function chatTools(tools: unknown): unknown[] {
  if (!Array.isArray(tools)) throw invalid('tools', "'tools' must be a list")
  return tools.map((t, n) => {
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function))
      throw unsupported(`tools[${n}]`, "only { type: 'function', function: { name, description, parameters } }")
    const f = t.function
    return { type: 'function', name: f.name, description: f.description, parameters: f.parameters }
  })
}

/** A refusal of an input item, renamed to the message it came from; of the format, to `response_format`. */
function inChatTerms(err: unknown, from: number[]): unknown {
  if (!(err instanceof PlatformError) || typeof err.params.param !== 'string') return err
  const param = err.params.param
    .replace(/^input(?:\[(\d+)\])?/, (_, n?: string) =>
      n === undefined ? 'messages' : `messages[${from[Number(n)] ?? n}]`
    )
    .replace(/^text\.format/, 'response_format')
  return new PlatformError(err.def, { ...err.params, param })
}
