import { createHash } from 'node:crypto'
import type { AiService } from '../ai/index.js'
import type { Logger } from '../observability/index.js'
import type { InteractionHeader } from './types.js'

/**
 * The conversation memory key of an owner's conversation: the owner is part of it, so no other
 * principal's turn, here or on another surface that takes conversation ids, reads this history.
 */
export function conversationKey(owner: string, conversationId: string): string {
  const who = createHash('sha256').update(owner).digest('base64url').slice(0, 22)
  return `interactions/${who}/${conversationId}`
}

/** The user message and the answer join the conversation before the client can see COMPLETED. */
export async function rememberTurn(
  ai: AiService,
  logger: Logger,
  message: string,
  h: InteractionHeader
): Promise<void> {
  try {
    await ai.memory.append(conversationKey(h.userId, h.conversationId), [
      { role: 'user', content: message },
      { role: 'assistant', content: h.finalText ?? '' }
    ])
  } catch (err) {
    logger.error({ err, interaction: h.id }, 'interaction turn not added to its conversation')
  }
}
