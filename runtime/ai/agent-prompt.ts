import { parseJsonBody } from '../http/index.js'

/** Longest client-chosen conversation id; the memory key adds the caller's prefix to it. */
export const CONVERSATION_ID_MAX = 200
const MODEL_MAX = 200

/** What one client frame (or POST body) asks for. */
export type ClientFrame =
  | {
      kind: 'prompt'
      message: string
      conversationId?: string
      metadata?: Record<string, unknown>
      model?: string
    }
  | { kind: 'cancel' }
  | { kind: 'bad'; code: 'bad-frame' | 'empty'; message: string }

const SHAPES = 'send plain text, {"message": "...", "conversationId"?, "metadata"?, "model"?} or {"type":"cancel"}'

/**
 * Reads a client frame: text that is not a JSON object or array is the prompt itself; a JSON
 * object is a prompt envelope or a cancel; any other JSON shape is refused (and changes nothing).
 */
export function parseClientFrame(text: string, jsonMaxDepth: number): ClientFrame {
  const trimmed = text.trim()
  if (trimmed === '') return { kind: 'bad', code: 'empty', message: 'empty prompt: ' + SHAPES }
  const first = trimmed[0]
  if (first !== '{' && first !== '[') return { kind: 'prompt', message: text }
  let value: unknown
  try {
    value = parseJsonBody(Buffer.from(trimmed), jsonMaxDepth)
  } catch {
    // braces that do not parse are prose, not a broken envelope
    return { kind: 'prompt', message: text }
  }
  return envelope(value)
}

function envelope(value: unknown): ClientFrame {
  const bad = (why: string): ClientFrame => ({ kind: 'bad', code: 'bad-frame', message: `${why}: ${SHAPES}` })
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('unknown frame')
  const o = value as Record<string, unknown>
  if (o.type === 'cancel' && Object.keys(o).length === 1) return { kind: 'cancel' }
  if (!('message' in o)) return bad('unknown frame')
  for (const k of Object.keys(o))
    if (k !== 'message' && k !== 'conversationId' && k !== 'metadata' && k !== 'model')
      return bad(`unknown field '${k.slice(0, 50)}'`)
  if (typeof o.message !== 'string' || o.message.trim() === '') return bad("'message' must be a non-empty string")
  const out: ClientFrame = { kind: 'prompt', message: o.message }
  if (o.conversationId !== undefined) {
    if (
      typeof o.conversationId !== 'string' ||
      o.conversationId === '' ||
      o.conversationId.length > CONVERSATION_ID_MAX
    )
      return bad(`'conversationId' must be a string of 1 to ${CONVERSATION_ID_MAX} characters`)
    out.conversationId = o.conversationId
  }
  if (o.metadata !== undefined) {
    if (typeof o.metadata !== 'object' || o.metadata === null || Array.isArray(o.metadata))
      return bad("'metadata' must be an object")
    out.metadata = o.metadata as Record<string, unknown>
  }
  if (o.model !== undefined) {
    if (typeof o.model !== 'string' || o.model === '' || o.model.length > MODEL_MAX)
      return bad(`'model' must be a string of 1 to ${MODEL_MAX} characters`)
    out.model = o.model
  }
  return out
}
