import type { AiMessage } from '../ai/index.js'
import { PlatformError } from '../contracts/index.js'
import { OPENAI_API_ERRORS } from './errors.js'

export const invalid = (param: string, detail: string): PlatformError =>
  new PlatformError(OPENAI_API_ERRORS.OPENAI_INVALID_REQUEST, { param, detail })
export const unsupported = (param: string, detail: string): PlatformError =>
  new PlatformError(OPENAI_API_ERRORS.OPENAI_UNSUPPORTED, { param, detail })
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** One input item as `GET /v1/responses/{id}/input_items` lists it (its `id` is added on read). */
export type StoredItem = Record<string, unknown> & { type: string }

/** `input` in the terms of a turn. */
export interface ParsedInput {
  /** The last user message; undefined when the input only answers function calls of the previous response. */
  message: string | undefined
  /** Items before it: user and assistant messages, function calls and their outputs. */
  history: AiMessage[]
  /** After it: the assistant's function calls and their outputs, which the model answers now. */
  continuation: AiMessage[]
  /** The images of the last user message (URLs or data URLs). */
  images: string[]
  /** The items as the record keeps them. */
  items: StoredItem[]
}

/**
 * `input`: a string (one user message) or items: messages (user, assistant, system, developer),
 * `function_call` and `function_call_output`. The system and developer texts go to `systems`.
 */
export function parseInput(input: unknown, systems: string[]): ParsedInput {
  if (typeof input === 'string') {
    if (input.trim() === '') throw invalid('input', "'input' must not be empty")
    return {
      message: input,
      history: [],
      continuation: [],
      images: [],
      items: [{ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: input }] }]
    }
  }
  if (!Array.isArray(input) || input.length === 0) throw invalid('input', "'input' must be a string or a list of items")
  const turns: AiMessage[] = []
  const items: StoredItem[] = []
  // the images of each user message, by its index in `turns`
  const imagesAt = new Map<number, { at: string; urls: string[] }>()
  input.forEach((item, n) => {
    const at = `input[${n}]`
    if (!isObject(item)) throw invalid(at, 'an input item must be an object')
    const type = item.type ?? 'message'
    if (type === 'function_call') {
      const call = functionCall(item, at)
      const last = turns.at(-1)
      if (last?.role === 'assistant') (last.toolCalls ??= []).push(call)
      else turns.push({ role: 'assistant', content: '', toolCalls: [call] })
      items.push({
        type: 'function_call',
        call_id: call.id,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
        status: 'completed'
      })
      return
    }
    if (type === 'function_call_output') {
      const callId = requiredString(item, 'call_id', at)
      const output = item.output
      if (typeof output !== 'string') throw invalid(`${at}.output`, "'output' must be a string")
      // the name of the call it answers, when the input holds that call
      let name: string | undefined
      for (const m of turns) if (m.role === 'assistant') name = m.toolCalls?.find((c) => c.id === callId)?.name ?? name
      turns.push({ role: 'tool', toolCallId: callId, content: output, ...(name !== undefined ? { name } : {}) })
      items.push({ type: 'function_call_output', call_id: callId, output, status: 'completed' })
      return
    }
    if (type !== 'message') throw unsupported(`${at}.type`, `input items of type '${String(type)}'`)
    const role = item.role
    if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer')
      throw invalid(`${at}.role`, "the role must be 'user', 'assistant', 'system' or 'developer'")
    const { text, parts, images } = content(item.content, `${at}.content`, role === 'user')
    items.push({ type: 'message', role, status: 'completed', content: parts })
    if (role === 'system' || role === 'developer') systems.push(text)
    else if (role === 'user') {
      if (images.length > 0) imagesAt.set(turns.length, { at: `${at}.content`, urls: images })
      turns.push({ role, content: text })
    } else turns.push({ role, content: text })
  })
  let u = turns.length - 1
  while (u >= 0 && turns[u]!.role !== 'user') u--
  for (const [i, { at }] of imagesAt)
    if (i !== u) throw unsupported(at, 'images are taken in the last user message only')
  const after = turns.slice(u + 1)
  if (after.length > 0 && after.at(-1)!.role !== 'tool')
    throw invalid('input', 'the input must end with a user message or a function_call_output item')
  return {
    message: u >= 0 ? (turns[u]!.content as string) : undefined,
    history: turns.slice(0, Math.max(u, 0)),
    continuation: after,
    images: imagesAt.get(u)?.urls ?? [],
    items
  }
}

function functionCall(
  item: Record<string, unknown>,
  at: string
): { id: string; name: string; arguments: Record<string, unknown> } {
  const id = requiredString(item, 'call_id', at)
  const name = requiredString(item, 'name', at)
  const raw = item.arguments
  let args: unknown
  try {
    args = typeof raw === 'string' ? (raw.trim() === '' ? {} : JSON.parse(raw)) : undefined
  } catch {
    args = undefined
  }
  if (!isObject(args)) throw invalid(`${at}.arguments`, "'arguments' must be a JSON object in a string")
  return { id, name, arguments: args }
}

function requiredString(item: Record<string, unknown>, key: string, at: string): string {
  const v = item[key]
  if (typeof v !== 'string' || v === '') throw invalid(`${at}.${key}`, `'${key}' must be a non-empty string`)
  return v
}

/** A message's content: a string, or parts; a user message's may carry images. */
function content(
  raw: unknown,
  at: string,
  user: boolean
): { text: string; parts: Record<string, unknown>[]; images: string[] } {
  if (typeof raw === 'string') return { text: raw, parts: [{ type: 'input_text', text: raw }], images: [] }
  if (!Array.isArray(raw)) throw invalid(at, 'content must be a string or a list of parts')
  const texts: string[] = []
  const parts: Record<string, unknown>[] = []
  const images: string[] = []
  raw.forEach((part, n) => {
    const p = `${at}[${n}]`
    if (!isObject(part)) throw invalid(p, 'a content part must be an object')
    if (part.type === 'input_image') {
      if (!user) throw invalid(p, 'only a user message takes images')
      if (typeof part.image_url !== 'string' || !/^(https?:|data:image\/)/.test(part.image_url))
        throw part.file_id !== undefined
          ? unsupported(`${p}.file_id`, 'images by file id: send image_url (a URL or a data URL)')
          : invalid(`${p}.image_url`, "'image_url' must be an http(s) URL or a data:image/ URL")
      images.push(part.image_url)
      parts.push({ type: 'input_image', image_url: part.image_url, detail: part.detail ?? 'auto' })
      return
    }
    if (part.type === 'input_file') throw unsupported(`${p}.type`, "'input_file' parts")
    if ((part.type !== 'input_text' && part.type !== 'output_text') || typeof part.text !== 'string')
      throw invalid(p, "a part must be { type: 'input_text', text }")
    texts.push(part.text)
    parts.push({ type: part.type, text: part.text })
  })
  return { text: texts.join('\n\n'), parts, images }
}
