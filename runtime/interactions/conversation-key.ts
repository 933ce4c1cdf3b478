import { createHash } from 'node:crypto'

/**
 * The conversation memory key of an owner's conversation: the owner is part of it, so no other
 * principal's turn, here or on another surface that takes conversation ids, reads this history.
 */
export function conversationKey(owner: string, conversationId: string): string {
  const who = createHash('sha256').update(owner).digest('base64url').slice(0, 22)
  return `interactions/${who}/${conversationId}`
}
