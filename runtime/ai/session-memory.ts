import { InMemoryConversationMemory, type ConversationMemory } from './memory.js'
import type { AiMessage } from './runtime.js'

/** How the agent endpoint's keys of memory that belongs to one session begin (`s:<session id>…`). */
export const SESSION_KEY_PREFIX = 's:'

/**
 * Node-local memory whose session-owned keys stay in the process. Such a conversation dies with
 * its connection, which lives in this process only, so a commit to disk bought it nothing: it
 * cost two write transactions a turn (the append, then the clear when the session went) and, on
 * a crash, left keys no one could reach again. Every other key goes to the durable store; reads,
 * appends and clears by any path (the admin API included) see the same conversations as before.
 */
export class SessionScopedMemory implements ConversationMemory {
  private readonly session: InMemoryConversationMemory

  constructor(private readonly durable: ConversationMemory) {
    this.session = new InMemoryConversationMemory(durable.maxMessages)
  }

  get kind(): ConversationMemory['kind'] {
    return this.durable.kind
  }

  get maxMessages(): number {
    return this.durable.maxMessages
  }

  private of(conversationId: string): ConversationMemory {
    return typeof conversationId === 'string' && conversationId.startsWith(SESSION_KEY_PREFIX)
      ? this.session
      : this.durable
  }

  append(conversationId: string, messages: AiMessage[]): Promise<void> {
    return this.of(conversationId).append(conversationId, messages)
  }

  read(conversationId: string, limit?: number): Promise<AiMessage[]> {
    return this.of(conversationId).read(conversationId, limit)
  }

  clear(conversationId: string): Promise<boolean> {
    return this.of(conversationId).clear(conversationId)
  }
}
