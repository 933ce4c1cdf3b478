import {
  INTERACTION_ERRORS,
  type Interaction,
  type InteractionRequest,
  type InteractionService
} from '../interactions/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { PlatformError } from '../contracts/index.js'
import { OPENAI_API_ERRORS } from './errors.js'
import type { ResponseRequest } from './response-request.js'

export interface OpenAiApiOptions {
  interactions: InteractionService
  agents: () => RegisteredAgent[]
}

export interface ModelObject {
  id: string
  object: 'model'
  created: number
  owned_by: string
}

/**
 * The OpenAI-compatible API over the interactions: a model is an agent, a response is an
 * interaction (the response id is the interaction id, so either API reads the other's records).
 */
export class OpenAiApi {
  readonly interactions: InteractionService
  // when this server first listed each agent: the `created` of its model object
  readonly #firstSeen = new Map<string, number>()

  constructor(private readonly opts: OpenAiApiOptions) {
    this.interactions = opts.interactions
  }

  models(): ModelObject[] {
    return this.opts.agents().map((a) => this.model(a))
  }

  /** The agent a `model` names; 404 in OpenAI's terms when none does. */
  agent(model: string): RegisteredAgent {
    const agent = this.opts.agents().find((a) => a.name === model)
    if (agent === undefined) throw new PlatformError(OPENAI_API_ERRORS.OPENAI_UNKNOWN_MODEL, { model, param: 'model' })
    return agent
  }

  model(agent: RegisteredAgent): ModelObject {
    let created = this.#firstSeen.get(agent.name)
    if (created === undefined) this.#firstSeen.set(agent.name, (created = Math.floor(Date.now() / 1000)))
    return { id: agent.name, object: 'model', created, owned_by: agent.plugin }
  }

  /**
   * Starts the interaction of a create. A streamed one runs in the background (the stream follows
   * it), so the answer comes back as soon as it is recorded.
   */
  create(owner: string, roles: readonly string[], req: ResponseRequest): Promise<Interaction> {
    this.agent(req.model)
    const ireq: InteractionRequest = {
      message: req.message,
      agentId: req.model,
      background: req.background || req.stream,
      store: req.store,
      roles,
      ...(req.history.length > 0 ? { history: req.history } : {}),
      ...(req.systemPrompt !== undefined ? { systemPrompt: req.systemPrompt } : {}),
      ...(Object.keys(req.metadata).length > 0 ? { metadata: req.metadata } : {}),
      ...(req.previousResponseId !== undefined ? { previousInteractionId: req.previousResponseId } : {})
    }
    return this.interactions.create(owner, ireq).catch((err: unknown) => {
      // the interactions' own 400 says "previous interaction": say it in this API's terms
      if (err instanceof PlatformError && err.is(INTERACTION_ERRORS.INTERACTION_PREVIOUS_UNKNOWN))
        throw new PlatformError(OPENAI_API_ERRORS.OPENAI_RESPONSE_NOT_FOUND, {
          id: req.previousResponseId,
          param: 'previous_response_id'
        })
      throw err
    })
  }

  /** The owner's response; 404 when unknown or someone else's. */
  async get(owner: string, id: string): Promise<Interaction> {
    const found = ID.test(id) ? await this.interactions.get(owner, id) : undefined
    if (found === undefined) throw new PlatformError(OPENAI_API_ERRORS.OPENAI_RESPONSE_NOT_FOUND, { id })
    return found
  }
}

/** The interactions' id pattern: anything else is unknown here, not malformed. */
const ID = /^[A-Za-z0-9_-]{1,128}$/
