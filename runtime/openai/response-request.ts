import type { AiResponseFormat, AiToolSpec } from '../ai/index.js'
import type { TurnAsk } from './api.js'
import { RESERVED_METADATA } from '../interactions/index.js'
import { invalid, isObject, parseInput, unsupported } from './response-input.js'
import { parseTextFormat } from './response-format.js'

export { invalid } from './response-input.js'

/** A `POST /v1/responses` body, checked, in the terms of an interaction. */
export interface ResponseRequest extends TurnAsk {
  instructions: string | null
  /** The client's function tools (none when `tool_choice` is 'none'). */
  tools: AiToolSpec[]
  /** What the response echoes: the tools as sent and the choice. */
  toolsEcho: unknown[]
  toolChoice: 'auto' | 'none'
}

// accepted and not applied: sampling and caching hints that no runtime here takes (docs/openai-api.md says so)
const IGNORED = ['temperature', 'top_p', 'user', 'safety_identifier', 'prompt_cache_key', 'parallel_tool_calls']
const KEYS = new Set([
  'model',
  'input',
  'instructions',
  'metadata',
  'store',
  'background',
  'stream',
  'previous_response_id',
  'tools',
  'tool_choice',
  'truncation',
  'text',
  'max_output_tokens',
  ...IGNORED
])

/** Checks a create body; a body it refuses changes nothing. */
export function parseResponseRequest(body: unknown): ResponseRequest {
  if (!isObject(body)) throw invalid('body', 'the body must be a JSON object')
  for (const k of Object.keys(body)) if (!KEYS.has(k)) throw unsupported(k, 'unknown parameter')
  const model = body.model
  if (typeof model !== 'string' || model === '') throw invalid('model', "'model' must name an agent")
  const systems: string[] = []
  const instructions = optionalString(body, 'instructions')
  if (instructions !== undefined && instructions !== '') systems.push(instructions)
  const input = parseInput(body.input, systems)
  const previous = optionalString(body, 'previous_response_id')
  if (input.message === undefined && (previous === undefined || previous === ''))
    throw invalid('input', 'an input without a user message answers function calls: it needs previous_response_id')
  const { tools, toolsEcho, toolChoice } = parseTools(body)
  const responseFormat = parseText(body)
  const store = flag(body, 'store', true)
  const background = flag(body, 'background', false)
  if (background && !store) throw invalid('background', 'a background response must be stored (store: true)')
  return {
    model,
    ...input,
    systemPrompt: systems.length === 0 ? undefined : systems.join('\n\n'),
    instructions: instructions ?? null,
    metadata: parseMetadata(body.metadata),
    store,
    background,
    stream: flag(body, 'stream', false),
    previousResponseId: previous === '' ? undefined : previous,
    maxOutputTokens: maxOutputTokens(body.max_output_tokens),
    tools,
    toolsEcho,
    toolChoice,
    responseFormat
  }
}

function maxOutputTokens(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined
  if (!Number.isSafeInteger(v) || (v as number) < 1)
    throw invalid('max_output_tokens', "'max_output_tokens' must be a positive integer")
  return v as number
}

/** Function tools the client runs; `tool_choice` 'auto' or 'none' (a forced call is not offered). */
function parseTools(body: Record<string, unknown>): {
  tools: AiToolSpec[]
  toolsEcho: unknown[]
  toolChoice: 'auto' | 'none'
} {
  const { tools, tool_choice: choice, truncation } = body
  if (truncation !== undefined && truncation !== null && truncation !== 'disabled')
    throw unsupported('truncation', "only 'disabled'")
  if (choice !== undefined && choice !== null && choice !== 'auto' && choice !== 'none')
    throw unsupported('tool_choice', "only 'auto' and 'none': a forced tool call is not offered")
  const toolChoice = choice === 'none' ? 'none' : 'auto'
  if (tools === undefined || tools === null) return { tools: [], toolsEcho: [], toolChoice }
  if (!Array.isArray(tools)) throw invalid('tools', "'tools' must be a list")
  const specs: AiToolSpec[] = []
  const names = new Set<string>()
  tools.forEach((t, n) => {
    const at = `tools[${n}]`
    if (!isObject(t)) throw invalid(at, 'a tool must be an object')
    if (t.type !== 'function') throw unsupported(`${at}.type`, "only 'function' tools (the client runs them)")
    if (typeof t.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(t.name))
      throw invalid(`${at}.name`, "a function's name is 1 to 64 letters, digits, '_' or '-'")
    if (names.has(t.name)) throw invalid(`${at}.name`, `two tools are named '${t.name}'`)
    names.add(t.name)
    if (t.description !== undefined && t.description !== null && typeof t.description !== 'string')
      throw invalid(`${at}.description`, "'description' must be a string")
    if (t.parameters !== undefined && t.parameters !== null && !isObject(t.parameters))
      throw invalid(`${at}.parameters`, "'parameters' must be a JSON schema object")
    specs.push({
      name: t.name,
      ...(typeof t.description === 'string' ? { description: t.description } : {}),
      ...(isObject(t.parameters) ? { inputSchema: t.parameters } : {})
    })
  })
  return { tools: toolChoice === 'none' ? [] : specs, toolsEcho: tools, toolChoice }
}

/** `text`: its `format` (plain text, any JSON object, or a JSON schema); `verbosity` is accepted and not applied. */
function parseText(body: Record<string, unknown>): AiResponseFormat | undefined {
  const { text } = body
  if (text === undefined || text === null) return undefined
  if (!isObject(text) || Object.keys(text).some((k) => k !== 'format' && k !== 'verbosity'))
    throw invalid('text', "'text' must be an object with 'format'")
  return parseTextFormat(text.format)
}

/** OpenAI's metadata: at most 16 string pairs, keys up to 64 characters, values up to 512. */
function parseMetadata(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {}
  if (!isObject(v)) throw invalid('metadata', "'metadata' must be an object of strings")
  const entries = Object.entries(v)
  if (entries.length > 16) throw invalid('metadata', 'at most 16 metadata pairs')
  for (const [k, val] of entries) {
    if (k.length === 0 || k.length > 64) throw invalid('metadata', 'metadata keys are 1 to 64 characters')
    if (typeof val !== 'string' || val.length > 512)
      throw invalid(`metadata.${k}`, 'metadata values are strings of at most 512 characters')
    if (RESERVED_METADATA.includes(k))
      throw invalid(`metadata.${k}`, "the key is reserved for the platform's own requests")
  }
  return v as Record<string, string>
}

function optionalString(b: Record<string, unknown>, key: string): string | undefined {
  const v = b[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') throw invalid(key, `'${key}' must be a string`)
  return v
}

function flag(b: Record<string, unknown>, key: string, absent: boolean): boolean {
  const v = b[key]
  if (v === undefined || v === null) return absent
  if (typeof v !== 'boolean') throw invalid(key, `'${key}' must be true or false`)
  return v
}
