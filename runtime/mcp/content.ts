import { isObject, type JsonObject } from './types.js'

const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource', 'resource_link'])

/** A value a tool returned that already is a CallToolResult (content blocks of known types). */
function isCallToolResult(v: unknown): v is JsonObject {
  return (
    isObject(v) &&
    Array.isArray(v.content) &&
    v.content.every((c) => isObject(c) && CONTENT_TYPES.has(c.type as string))
  )
}

export function isInputRequired(v: unknown): v is JsonObject {
  return isObject(v) && v.resultType === 'input_required'
}

/** Any JSON value → CallToolResult: strings as text; other values as JSON text plus `structuredContent`. */
export function toCallToolResult(value: unknown): JsonObject {
  if (isCallToolResult(value)) {
    const out: JsonObject = { content: value.content }
    if (value.structuredContent !== undefined) out.structuredContent = value.structuredContent
    out.isError = value.isError === true
    if (isObject(value._meta)) out._meta = value._meta
    return out
  }
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }], isError: false }
  if (value === undefined) return { content: [{ type: 'text', text: '' }], isError: false }
  const text = JSON.stringify(value) ?? 'null'
  return { structuredContent: value, content: [{ type: 'text', text }], isError: false }
}

export function toolErrorResult(message: string): JsonObject {
  return { content: [{ type: 'text', text: message }], isError: true }
}

/** A resource handler's value → `contents` (text, `{text|blob, mimeType}`, bytes, or a ready `contents` list). */
export function toContents(value: unknown, uri: string, mimeType: string): JsonObject[] {
  if (isObject(value) && Array.isArray(value.contents)) return value.contents as JsonObject[]
  if (typeof value === 'string') return [{ uri, mimeType, text: value }]
  if (value instanceof Uint8Array) return [{ uri, mimeType, blob: Buffer.from(value).toString('base64') }]
  if (isObject(value) && (typeof value.text === 'string' || typeof value.blob === 'string')) {
    const c: JsonObject = {
      uri: typeof value.uri === 'string' ? value.uri : uri,
      mimeType: typeof value.mimeType === 'string' ? value.mimeType : mimeType
    }
    if (typeof value.text === 'string') c.text = value.text
    else c.blob = value.blob
    if (isObject(value._meta)) c._meta = value._meta
    return [c]
  }
  return [{ uri, mimeType: 'application/json', text: JSON.stringify(value) ?? 'null' }]
}

/**
 * Prompt handler value → GetPromptResult; `system` messages (SDK McpMessage.system) travel as `user`,
 * MCP has no system role.
 */
export function toPromptResult(value: unknown, description: string): JsonObject {
  const raw = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.messages) ? value.messages : [value]
  const messages = raw.map((m) => {
    if (isObject(m) && isObject(m.content))
      return { role: m.role === 'assistant' ? 'assistant' : 'user', content: m.content }
    return { role: 'user', content: { type: 'text', text: typeof m === 'string' ? m : JSON.stringify(m) } }
  })
  const out: JsonObject = { messages }
  const d = isObject(value) && typeof value.description === 'string' ? value.description : description
  if (d !== '') out.description = d
  return out
}
