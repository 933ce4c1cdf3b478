import { createHash } from 'node:crypto'
import type { RegisteredAgent } from '../plugins/index.js'
import type { ClientFrame } from './agent-prompt.js'
import type { PlayInput } from './agent-turn-player.js'
import { SESSION_KEY_PREFIX } from './session-memory.js'

export type Prompt = Extract<ClientFrame, { kind: 'prompt' }>
/** Who is asking, as the request's credentials established it (undefined: anonymous). */
export type Caller = { name: string; roles: readonly string[] } | undefined

/**
 * Memory is keyed by who asks plus their conversation id: a principal's conversations survive
 * reconnects and restarts; an anonymous caller's belong to its session alone. Without a
 * conversation id the session is the conversation.
 */
export function memoryKey(caller: Caller, sessionId: string, conversationId: string | undefined): string {
  if (conversationId === undefined) return SESSION_KEY_PREFIX + sessionId
  const owner =
    caller !== undefined
      ? 'p:' + createHash('sha256').update(caller.name).digest('hex').slice(0, 32)
      : SESSION_KEY_PREFIX + sessionId
  return `${owner}:${conversationId}`
}

/** A client's prompt as the turn player takes it: facts from the credentials, the client's metadata as claims. */
export function turnInput(
  agent: RegisteredAgent,
  prompt: Prompt,
  sessionId: string,
  caller: Caller,
  key: string,
  feedbackFrames: boolean,
  freshKey: boolean
): PlayInput {
  return {
    memoryKey: key,
    freshKey,
    feedbackFrames,
    request: {
      agent: agent.name,
      message: prompt.message,
      sessionId,
      // the scoped key, so governance feedback for a conversation never reaches another caller's
      conversationId: key,
      ...(caller !== undefined ? { userId: caller.name } : {}),
      // roles are what the credentials say; what the client sent is its claims, never facts
      ...(caller !== undefined ? { roles: caller.roles } : {}),
      ...(prompt.metadata !== undefined ? { clientMetadata: prompt.metadata } : {}),
      ...(prompt.model !== undefined ? { model: prompt.model } : {})
    }
  }
}
