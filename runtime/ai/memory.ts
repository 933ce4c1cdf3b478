import type { Database } from 'lmdb'
import type { AiMessage } from './runtime.js'

/**
 * The messages of each conversation, so a client sends only its new message and the turn reads
 * the history from here. Each conversation keeps at most `maxMessages`; the oldest go first, and
 * a tool result whose call went with them goes too, since a runtime refuses a tool message that
 * follows no call of its own.
 */
export interface ConversationMemory {
  readonly kind: 'memory' | 'lmdb' | 'postgres'
  readonly maxMessages: number
  /** Adds messages after the newest ones; resolves once they are kept (committed for LMDB). */
  append(conversationId: string, messages: AiMessage[]): Promise<void>
  /**
   * The newest `limit` messages (all kept when absent), oldest first. A leading tool result whose
   * call lies outside the window is left out, so the answer may hold fewer than `limit`.
   */
  read(conversationId: string, limit?: number): Promise<AiMessage[]>
  /** Forgets a conversation; resolves true when it held messages. */
  clear(conversationId: string): Promise<boolean>
}

/** LMDB's key limit is 1978 bytes; ids are client-chosen, so they are bounded well below it. */
export const MAX_CONVERSATION_ID_LENGTH = 256

/** Throws a clear error for an id or message a client could send wrong; changes nothing. */
export function checkConversationId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_CONVERSATION_ID_LENGTH)
    throw new TypeError(`conversation id must be a string of 1 to ${MAX_CONVERSATION_ID_LENGTH} characters`)
}

export function checkMessages(messages: unknown): asserts messages is AiMessage[] {
  if (!Array.isArray(messages)) throw new TypeError('messages must be an array of AI messages')
  messages.forEach((m: unknown, i) => {
    const problem = messageProblem(m)
    if (problem !== undefined) throw new TypeError(`message ${i}: ${problem}`)
  })
}

function messageProblem(m: unknown): string | undefined {
  if (typeof m !== 'object' || m === null) return 'not an object'
  const msg = m as Record<string, unknown>
  if (typeof msg.content !== 'string') return 'content must be a string'
  switch (msg.role) {
    case 'user':
      return undefined
    case 'assistant':
      if (msg.toolCalls === undefined) return undefined
      if (!Array.isArray(msg.toolCalls)) return 'toolCalls must be an array'
      for (const c of msg.toolCalls as unknown[]) {
        const call = c as Record<string, unknown> | null
        if (typeof call !== 'object' || call === null || typeof call.id !== 'string' || typeof call.name !== 'string')
          return 'each tool call needs a string id and name'
        if (typeof call.arguments !== 'object' || call.arguments === null || Array.isArray(call.arguments))
          return 'tool call arguments must be an object'
      }
      return undefined
    case 'tool':
      if (typeof msg.toolCallId !== 'string' || msg.toolCallId === '') return 'a tool message needs its toolCallId'
      return undefined
    default:
      return `role must be user, assistant or tool, not ${JSON.stringify(msg.role)}`
  }
}

/**
 * How many of the oldest messages to drop so `messages` fits `max` with no orphaned tool result
 * at its head. Only the head can be orphaned: results always follow their call.
 */
export function excessAtHead(messages: readonly Pick<AiMessage, 'role'>[], max: number): number {
  let drop = Math.max(0, messages.length - max)
  while (drop < messages.length && messages[drop]!.role === 'tool') drop++
  return drop
}

/** The newest `limit` of `kept`, without a leading tool result cut from its call. */
export function windowOf(kept: readonly AiMessage[], limit: number | undefined): AiMessage[] {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0))
    throw new TypeError('limit must be a non-negative integer')
  let start = limit === undefined ? 0 : Math.max(0, kept.length - limit)
  while (start < kept.length && kept[start]!.role === 'tool') start++
  return kept.slice(start)
}

/** Memory in the process: for tests and `platform.ai.memory.store: memory`; gone on restart. */
export class InMemoryConversationMemory implements ConversationMemory {
  readonly kind = 'memory'
  private readonly conversations = new Map<string, AiMessage[]>()

  constructor(readonly maxMessages: number) {}

  async append(conversationId: string, messages: AiMessage[]): Promise<void> {
    checkConversationId(conversationId)
    checkMessages(messages)
    // copies, like LMDB's encoding: a caller mutating its objects later changes nothing kept
    const kept = [...(this.conversations.get(conversationId) ?? []), ...copies(messages)]
    const drop = excessAtHead(kept, this.maxMessages)
    if (drop >= kept.length) this.conversations.delete(conversationId)
    else this.conversations.set(conversationId, kept.slice(drop))
  }

  async read(conversationId: string, limit?: number): Promise<AiMessage[]> {
    checkConversationId(conversationId)
    return copies(windowOf(this.conversations.get(conversationId) ?? [], limit))
  }

  async clear(conversationId: string): Promise<boolean> {
    checkConversationId(conversationId)
    return this.conversations.delete(conversationId)
  }
}

/**
 * Deep copies of `messages`: a message of strings alone (a turn's user message and answer) is
 * copied by a spread, far cheaper than `structuredClone`, which copies the others.
 */
function copies(messages: readonly AiMessage[]): AiMessage[] {
  const out: AiMessage[] = []
  for (const m of messages) out.push(flat(m) ? { ...m } : structuredClone(m))
  return out
}

/** Every field a string, number, boolean or undefined (anything else is left to `structuredClone`, throws included). */
function flat(m: AiMessage): boolean {
  for (const k in m) {
    const t = typeof (m as Record<string, unknown>)[k]
    if (t === 'object' || t === 'function' || t === 'symbol' || t === 'bigint') return false
  }
  return true
}

/** `[conversation id, sequence]`: a conversation's messages are adjacent, in append order. */
export type MemoryKey = [string, number]

/**
 * Memory in a named LMDB database. An append and its trim run in one write transaction, so the
 * bound holds at every commit, and a resolved append survives a crash of the process.
 */
export class LmdbConversationMemory implements ConversationMemory {
  readonly kind = 'lmdb'

  constructor(
    private readonly db: Database<AiMessage, MemoryKey>,
    readonly maxMessages: number
  ) {}

  async append(conversationId: string, messages: AiMessage[]): Promise<void> {
    checkConversationId(conversationId)
    checkMessages(messages)
    if (messages.length === 0) return
    await this.db.transaction(() => {
      const entries = this.entries(conversationId)
      let seq = entries.length === 0 ? 0 : entries[entries.length - 1]!.key[1] + 1
      for (const m of messages) {
        const key: MemoryKey = [conversationId, seq++]
        void this.db.put(key, m)
        entries.push({ key, value: m })
      }
      const drop = excessAtHead(
        entries.map((e) => e.value),
        this.maxMessages
      )
      for (let i = 0; i < drop; i++) void this.db.remove(entries[i]!.key)
    })
  }

  async read(conversationId: string, limit?: number): Promise<AiMessage[]> {
    checkConversationId(conversationId)
    return windowOf(
      this.entries(conversationId).map((e) => e.value),
      limit
    )
  }

  async clear(conversationId: string): Promise<boolean> {
    checkConversationId(conversationId)
    return this.db.transaction(() => {
      const entries = this.entries(conversationId)
      for (const e of entries) void this.db.remove(e.key)
      return entries.length > 0
    })
  }

  /** A conversation's messages with their keys, oldest first; at most the bound plus one append. */
  private entries(conversationId: string): { key: MemoryKey; value: AiMessage }[] {
    const out: { key: MemoryKey; value: AiMessage }[] = []
    for (const { key, value } of this.db.getRange({
      start: [conversationId, 0],
      end: [conversationId, Number.MAX_SAFE_INTEGER]
    }))
      out.push({ key, value })
    return out
  }
}
