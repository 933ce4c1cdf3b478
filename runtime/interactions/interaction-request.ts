import type { CreateInteraction } from 'uws-agent-platform/client'
import type { AiMessage, TurnRequest } from '../ai/index.js'
import { randomUUID } from 'node:crypto'
import type { IdempotencyClaim, InteractionHeader } from './types.js'

/** A create or continue body (the client's `CreateInteraction`), validated by the routes. */
export interface InteractionRequest extends CreateInteraction {
  background: boolean
  store: boolean
  /** The caller's roles as its credentials establish them (never the body): the policies read them. */
  roles?: readonly string[]
  /** The request's Idempotency-Key, saved with the record; a key held already throws IDEMPOTENCY_KEY_HELD. */
  idempotency?: IdempotencyClaim
  /**
   * Earlier messages the client sends with this turn (an OpenAI-style input of several items):
   * the model reads them after the conversation's own history, and they are not remembered.
   */
  history?: AiMessage[]
  /**
   * The client's input as the OpenAI-compatible API keeps it: the data of the `input` step,
   * recorded first, so the record can list the input back and a later turn can continue it.
   */
  input?: Record<string, unknown>
  /** Passed to the turn as they are (see TurnRequest). */
  turn?: Pick<TurnRequest, 'images' | 'maxOutputTokens' | 'clientTools' | 'continuation' | 'responseFormat'>
}

/** The RUNNING header of a new run of `owner`'s request, continuing `parent` when there is one. */
export function runHeader(
  owner: string,
  req: InteractionRequest,
  parent: InteractionHeader | undefined,
  model: string | null
): InteractionHeader {
  const now = new Date().toISOString()
  return {
    id: `int-${randomUUID()}`,
    parentId: parent?.id ?? null,
    conversationId: parent?.conversationId ?? `conv-${randomUUID()}`,
    agentId: req.agentId ?? null,
    userId: owner,
    model,
    status: 'RUNNING',
    background: req.background,
    store: req.store,
    finalText: null,
    usage: null,
    errorMessage: null,
    createdAt: now,
    updatedAt: now
  }
}
