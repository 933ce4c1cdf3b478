/**
 * AG-UI's `RunAgentInput` as this platform reads it: checked with ajv against the protocol's
 * shape (threadId, runId and messages required; tools, context, state, forwardedProps
 * optional), then turned into one turn. In AG-UI the client owns the conversation, so the last
 * user message is the turn's message and the ones before it are its history. After it may come
 * the assistant's tool calls and their results (a frontend tool the client ran): then the run
 * continues from them. `tools` are the client's frontend tools, offered to the model.
 */
import type { ErrorObject } from 'ajv/dist/2020.js'
import { compileOnUse } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import { MAX_CONVERSATION_ID_LENGTH } from './memory.js'
import type { AiMessage, AiToolCall, AiToolSpec } from './runtime.js'
import { AI_ERRORS } from './errors.js'

const str = { type: 'string' }
const obj = { type: 'object' }
/** Text, or content parts (text, image, audio, video, document, binary) of which only text is read. */
const content = { anyOf: [str, { type: 'array', items: { ...obj, required: ['type'], properties: { type: str } } }] }
const toolCall = {
  ...obj,
  required: ['id', 'type', 'function'],
  properties: {
    id: str,
    type: { const: 'function' },
    function: { ...obj, required: ['name', 'arguments'], properties: { name: str, arguments: str } }
  }
}
const role = (r: string | string[], then: Record<string, unknown>) => ({
  if: { properties: { role: Array.isArray(r) ? { enum: r } : { const: r } } },
  then
})
const message = {
  ...obj,
  required: ['id', 'role'],
  properties: {
    id: str,
    role: { enum: ['developer', 'system', 'assistant', 'user', 'tool', 'activity', 'reasoning'] },
    name: str
  },
  allOf: [
    role('user', { required: ['content'], properties: { content } }),
    role('assistant', { properties: { content: str, toolCalls: { type: 'array', items: toolCall } } }),
    role('tool', { required: ['content', 'toolCallId'], properties: { content, toolCallId: str } }),
    role(['system', 'developer', 'reasoning'], { required: ['content'], properties: { content: str } }),
    role('activity', { required: ['activityType', 'content'], properties: { activityType: str, content: obj } })
  ]
}
const SCHEMA = {
  ...obj,
  required: ['threadId', 'runId', 'messages'],
  properties: {
    threadId: { ...str, minLength: 1, maxLength: MAX_CONVERSATION_ID_LENGTH },
    runId: { ...str, minLength: 1, maxLength: MAX_CONVERSATION_ID_LENGTH },
    parentRunId: str,
    protocolVersion: str,
    messages: { type: 'array', minItems: 1, items: message },
    tools: {
      type: 'array',
      items: {
        ...obj,
        required: ['name', 'description'],
        properties: { name: { ...str, minLength: 1, maxLength: 128 }, description: str, parameters: obj }
      }
    },
    context: {
      type: 'array',
      items: { ...obj, required: ['description', 'value'], properties: { description: str, value: str } }
    },
    resume: { type: 'array', items: obj }
  }
}

/** What one AG-UI run asks of the platform. */
export interface AguiRunInput {
  threadId: string
  runId: string
  /** The client's state; undefined when it sent none (or null). */
  state: unknown
  /** Text of the last user message. */
  message: string
  /** The messages before it, as the runtime reads them (system, developer, activity and reasoning left out). */
  history: AiMessage[]
  /** The tool calls and results after it, when the run continues from a frontend tool's result. */
  continuation: AiMessage[]
  /** The client's frontend tools. */
  tools: AiToolSpec[]
  /** Ambient information the client attached, as `{description, value}` pairs. */
  context: { description: string; value: string }[]
  /** `forwardedProps` when an object (the protocol allows any value): the client's claims to policies. */
  forwardedProps: Record<string, unknown>
}

interface RawToolCall {
  id: string
  function: { name: string; arguments: string }
}
interface RawMessage {
  id: string
  role: string
  content?: unknown
  toolCalls?: RawToolCall[]
  toolCallId?: string
}
interface RawInput {
  threadId: string
  runId: string
  state?: unknown
  messages: RawMessage[]
  tools?: { name: string; description: string; parameters?: Record<string, unknown> }[]
  context?: { description: string; value: string }[]
  forwardedProps?: unknown
}

const validator = compileOnUse<RawInput>(SCHEMA, { strict: false, allErrors: false })

const bad = (detail: string): PlatformError => new PlatformError(AI_ERRORS.INVALID_AGUI_INPUT, { detail })

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks a parsed body and turns it into a run; a PlatformError (400) says what is wrong. */
export function parseAguiInput(body: unknown): AguiRunInput {
  const validate = validator()
  if (!validate(body)) throw bad(describe(validate.errors?.[0]))
  const raw = body
  const last = raw.messages[raw.messages.length - 1]!
  if (last.role !== 'user' && last.role !== 'tool')
    throw bad(
      `the last message must be the user's new message (role 'user') or a tool result (role 'tool'), not '${last.role}'`
    )
  let u = raw.messages.length - 1
  while (u >= 0 && raw.messages[u]!.role !== 'user') u--
  if (u < 0) throw bad('the messages hold no user message')
  const message = textOf(raw.messages[u]!.content)
  if (message === '') throw bad('the last user message has no text')
  const names = new Map<string, string>()
  const history = toHistory(raw.messages.slice(0, u), 0, names)
  const continuation = toHistory(raw.messages.slice(u + 1), u + 1, names, true)
  const tools: AiToolSpec[] = []
  const seen = new Set<string>()
  for (const [i, tl] of (raw.tools ?? []).entries()) {
    if (seen.has(tl.name)) throw bad(`tools[${i}]: a second tool named '${tl.name}'`)
    seen.add(tl.name)
    tools.push({
      name: tl.name,
      description: tl.description,
      inputSchema: tl.parameters ?? { type: 'object', properties: {} }
    })
  }
  return {
    threadId: raw.threadId,
    runId: raw.runId,
    state: raw.state ?? undefined,
    message,
    history,
    continuation,
    tools,
    context: raw.context ?? [],
    forwardedProps: isPlainObject(raw.forwardedProps) ? raw.forwardedProps : {}
  }
}

/**
 * Messages as the runtime reads them; `names` carries each tool call's name to its result. In a
 * continuation every tool result must answer a call made before it (a model refuses anything else).
 */
function toHistory(messages: RawMessage[], offset: number, names: Map<string, string>, strict = false): AiMessage[] {
  const out: AiMessage[] = []
  messages.forEach((m, k) => {
    const i = offset + k
    if (m.role === 'user') out.push({ role: 'user', content: textOf(m.content) })
    else if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((c, j) => toolCallOf(c, `messages[${i}].toolCalls[${j}]`))
      for (const c of calls) names.set(c.id, c.name)
      out.push({
        role: 'assistant',
        content: typeof m.content === 'string' ? m.content : '',
        ...(calls.length > 0 ? { toolCalls: calls } : {})
      })
    } else if (m.role === 'tool') {
      const name = names.get(m.toolCallId!)
      if (strict && name === undefined)
        throw bad(`messages[${i}] answers tool call '${m.toolCallId!}', which no assistant message before it made`)
      out.push({
        role: 'tool',
        toolCallId: m.toolCallId!,
        ...(name !== undefined ? { name } : {}),
        content: textOf(m.content)
      })
    }
  })
  return out
}

function toolCallOf(c: RawToolCall, at: string): AiToolCall {
  let args: unknown
  try {
    args = JSON.parse(c.function.arguments)
  } catch {
    throw bad(`${at}.function.arguments is not JSON`)
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw bad(`${at}.function.arguments must be a JSON object`)
  return { id: c.id, name: c.function.name, arguments: args as Record<string, unknown> }
}

/** A string as is; of content parts, the text parts joined by newlines. */
function textOf(c: unknown): string {
  if (typeof c === 'string') return c
  if (!Array.isArray(c)) return ''
  return c
    .filter((p: { type: string; text?: unknown }) => p.type === 'text' && typeof p.text === 'string')
    .map((p: { text: string }) => p.text)
    .join('\n')
}

function describe(e: ErrorObject | undefined): string {
  if (e === undefined) return 'not a RunAgentInput'
  const at = e.instancePath === '' ? 'the body' : e.instancePath.slice(1).replace(/\//g, '.')
  if (e.keyword === 'required') return `${at} needs '${String(e.params.missingProperty)}'`
  if (e.keyword === 'enum') return `${at} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
  return `${at} ${e.message ?? 'is invalid'}`
}
