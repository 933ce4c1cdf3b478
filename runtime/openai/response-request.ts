import type { AiMessage } from '../ai/index.js'
import { PlatformError } from '../contracts/index.js'
import { RESERVED_METADATA } from '../interactions/index.js'
import { OPENAI_API_ERRORS } from './errors.js'

/** A `POST /v1/responses` body, checked, in the terms of an interaction. */
export interface ResponseRequest {
  /** The agent `model` names. */
  model: string
  /** The last user message: the turn's message. */
  message: string
  /** The input items before it (user and assistant messages), read by the model after the conversation. */
  history: AiMessage[]
  /** `instructions` then the system and developer items, joined: the agent's system prompt for this turn. */
  systemPrompt: string | undefined
  instructions: string | null
  metadata: Record<string, string>
  store: boolean
  background: boolean
  stream: boolean
  previousResponseId: string | undefined
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
  ...IGNORED
])

export const invalid = (param: string, detail: string): PlatformError =>
  new PlatformError(OPENAI_API_ERRORS.OPENAI_INVALID_REQUEST, { param, detail })
const unsupported = (param: string, detail: string): PlatformError =>
  new PlatformError(OPENAI_API_ERRORS.OPENAI_UNSUPPORTED, { param, detail })

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks a create body; a body it refuses changes nothing. */
export function parseResponseRequest(body: unknown): ResponseRequest {
  if (!isObject(body)) throw invalid('body', 'the body must be a JSON object')
  for (const k of Object.keys(body)) if (!KEYS.has(k)) throw unsupported(k, 'unknown parameter')
  const model = body.model
  if (typeof model !== 'string' || model === '') throw invalid('model', "'model' must name an agent")
  const systems: string[] = []
  const instructions = optionalString(body, 'instructions')
  if (instructions !== undefined && instructions !== '') systems.push(instructions)
  const { message, history } = parseInput(body.input, systems)
  const previous = optionalString(body, 'previous_response_id')
  checkTools(body)
  const store = flag(body, 'store', true)
  const background = flag(body, 'background', false)
  if (background && !store) throw invalid('background', 'a background response must be stored (store: true)')
  return {
    model,
    message,
    history,
    systemPrompt: systems.length === 0 ? undefined : systems.join('\n\n'),
    instructions: instructions ?? null,
    metadata: parseMetadata(body.metadata),
    store,
    background,
    stream: flag(body, 'stream', false),
    previousResponseId: previous === '' ? undefined : previous
  }
}

/** Tools come with client function calling; until then only their empty forms are accepted. */
function checkTools(body: Record<string, unknown>): void {
  const { tools, tool_choice: choice, truncation, text } = body
  if (tools !== undefined && tools !== null && !(Array.isArray(tools) && tools.length === 0))
    throw unsupported('tools', 'tools are not offered to the model yet')
  if (choice !== undefined && choice !== null && choice !== 'auto' && choice !== 'none')
    throw unsupported('tool_choice', "only 'auto' and 'none' (there are no tools)")
  if (truncation !== undefined && truncation !== null && truncation !== 'disabled')
    throw unsupported('truncation', "only 'disabled'")
  if (text !== undefined && text !== null) {
    const format = isObject(text) ? text.format : undefined
    if (!isObject(text) || Object.keys(text).some((k) => k !== 'format' && k !== 'verbosity'))
      throw invalid('text', "'text' must be an object with 'format'")
    if (format !== undefined && !(isObject(format) && format.type === 'text'))
      throw unsupported('text.format', "only { type: 'text' }: structured output is not offered")
  }
}

/** `input`: a string (one user message) or message items; the last must be a user message. */
function parseInput(input: unknown, systems: string[]): { message: string; history: AiMessage[] } {
  if (typeof input === 'string') {
    if (input.trim() === '') throw invalid('input', "'input' must not be empty")
    return { message: input, history: [] }
  }
  if (!Array.isArray(input) || input.length === 0) throw invalid('input', "'input' must be a string or a list of items")
  const turns: AiMessage[] = []
  let lastRole: unknown
  input.forEach((item, n) => {
    const at = `input[${n}]`
    if (!isObject(item)) throw invalid(at, 'an input item must be an object')
    const type = item.type ?? 'message'
    if (type === 'function_call_output' || type === 'function_call')
      throw unsupported(`${at}.type`, 'function calling is not offered yet')
    if (type !== 'message') throw unsupported(`${at}.type`, `input items of type '${String(type)}'`)
    const role = item.role
    lastRole = role
    const text = contentText(item.content, `${at}.content`)
    if (role === 'system' || role === 'developer') systems.push(text)
    else if (role === 'user' || role === 'assistant') turns.push({ role, content: text })
    else throw invalid(`${at}.role`, "the role must be 'user', 'assistant', 'system' or 'developer'")
  })
  const last = turns.pop()
  if (last?.role !== 'user' || lastRole !== 'user') throw invalid('input', 'the last input item must be a user message')
  return { message: last.content, history: turns }
}

/** A message's content: a string, or parts of text (the only kind offered yet), joined. */
function contentText(content: unknown, at: string): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) throw invalid(at, 'content must be a string or a list of parts')
  return content
    .map((part, n) => {
      if (!isObject(part)) throw invalid(`${at}[${n}]`, 'a content part must be an object')
      if (part.type === 'input_image' || part.type === 'input_file')
        throw unsupported(`${at}[${n}].type`, `'${part.type}' parts are not offered yet`)
      if ((part.type !== 'input_text' && part.type !== 'output_text') || typeof part.text !== 'string')
        throw invalid(`${at}[${n}]`, "a part must be { type: 'input_text', text }")
      return part.text
    })
    .join('\n\n')
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
