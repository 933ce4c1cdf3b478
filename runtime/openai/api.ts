import {
  INTERACTION_ERRORS,
  type Interaction,
  type InteractionRequest,
  type InteractionService
} from '../interactions/index.js'
import type { IdempotencyClaim } from '../interactions/index.js'
import type { AiMessage, AiResponseFormat, AiRuntime, AiService, AiToolCall } from '../ai/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { PlatformError } from '../contracts/index.js'
import { OPENAI_API_ERRORS } from './errors.js'
import { invalid, unsupported, type StoredItem } from './response-input.js'
import { clientCalls, inputOf } from './response-object.js'

/** What a create asks of the turn, whichever API's request it came from. */
export interface TurnAsk {
  /** The agent `model` names. */
  model: string
  /** The last user message: the turn's message; undefined when the input only answers the previous response's calls. */
  message: string | undefined
  /** The input items before it (user and assistant messages), read by the model after the conversation. */
  history: AiMessage[]
  /** Function calls and their outputs after the message: the model answers them now. */
  continuation: AiMessage[]
  /** The images of the last user message. */
  images: string[]
  /** The input items as the record keeps them (`input_items` lists them). */
  items: StoredItem[]
  /** `instructions` then the system and developer items, joined: the agent's system prompt for this turn. */
  systemPrompt: string | undefined
  metadata: Record<string, string>
  store: boolean
  background: boolean
  stream: boolean
  previousResponseId: string | undefined
  maxOutputTokens: number | undefined
  tools: { name: string; description?: string; inputSchema?: Record<string, unknown> }[]
  /** `text.format` (Chat's `response_format`): undefined for plain text. */
  responseFormat: AiResponseFormat | undefined
}

/** A create checked: its message known. */
export type Checked = TurnAsk & { message: string }

export interface OpenAiApiOptions {
  interactions: InteractionService
  ai: AiService
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
   * it), so the answer comes back as soon as it is recorded. Input that only answers function
   * calls continues the previous response's turn: its message, then the calls and their outputs.
   */
  async create(owner: string, roles: readonly string[], req: Checked, claim?: IdempotencyClaim): Promise<Interaction> {
    const { message, continuation } = req
    const ireq: InteractionRequest = {
      message,
      agentId: req.model,
      background: req.background || req.stream,
      store: req.store,
      roles,
      input: {
        items: req.items,
        message,
        continuation,
        ...(req.responseFormat !== undefined ? { format: req.responseFormat } : {})
      },
      turn: {
        ...(continuation.length > 0 ? { continuation } : {}),
        ...(req.images.length > 0 ? { images: req.images } : {}),
        ...(req.maxOutputTokens !== undefined ? { maxOutputTokens: req.maxOutputTokens } : {}),
        ...(req.tools.length > 0 ? { clientTools: req.tools } : {}),
        ...(req.responseFormat !== undefined ? { responseFormat: req.responseFormat } : {})
      },
      ...(claim !== undefined ? { idempotency: claim } : {}),
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

  /**
   * Everything a create can refuse before it takes quota or starts anything: the model, the
   * images, a response format, and input that only answers the previous response's function
   * calls (its turn's message, then the calls and their outputs).
   */
  async check(owner: string, req: TurnAsk): Promise<Checked> {
    const agent = this.agent(req.model)
    if (req.images.length > 0) this.checkImages(agent)
    if (req.responseFormat !== undefined) this.checkFormat(agent)
    if (req.message !== undefined) return { ...req, message: req.message }
    const previous = await this.get(owner, req.previousResponseId ?? '').catch(() => {
      throw new PlatformError(OPENAI_API_ERRORS.OPENAI_RESPONSE_NOT_FOUND, {
        id: req.previousResponseId,
        param: 'previous_response_id'
      })
    })
    return { ...req, ...answering(previous, req.continuation) }
  }

  /** Images reach only a runtime that takes them: a 400 before anything runs otherwise. */
  private checkImages(agent: RegisteredAgent): void {
    if (agent.run !== undefined)
      throw unsupported('input', `the agent '${agent.name}' runs its own turn, which takes no images`)
    const runtime = this.runtimeOf(agent)
    if (runtime === undefined || !runtime.capabilities.includes('image-input'))
      throw unsupported('input', `the runtime of '${agent.name}' (${runtime?.name ?? 'none'}) takes no images`)
  }

  /** A response format reaches only a runtime that can keep to it: a 400 before anything runs otherwise. */
  private checkFormat(agent: RegisteredAgent): void {
    if (agent.run !== undefined)
      throw unsupported('text.format', `the agent '${agent.name}' runs its own turn, which keeps to no format`)
    const runtime = this.runtimeOf(agent)
    if (runtime === undefined || !runtime.capabilities.includes('structured-output'))
      throw unsupported(
        'text.format',
        `the runtime of '${agent.name}' (${runtime?.name ?? 'none'}) cannot keep to a JSON format; only { type: 'text' }`
      )
  }

  /** The runtime that answers the agent's turns: its own model's, else the active one. */
  private runtimeOf(agent: RegisteredAgent): AiRuntime | undefined {
    return (agent.model !== undefined ? this.opts.ai.runtime(agent.model) : undefined) ?? this.opts.ai.activeRuntime()
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

/**
 * The turn that answers `previous`'s function calls: its message, the exchange it carried, the
 * calls it handed to the client, then `outputs`; every call answered once, nothing else.
 */
function answering(previous: Interaction, outputs: AiMessage[]): { message: string; continuation: AiMessage[] } {
  const calls = clientCalls(previous)
  const before = inputOf(previous)
  if (calls.length === 0 || before === undefined || previous.status !== 'COMPLETED')
    throw invalid('input', `the response '${previous.id}' did not end with function calls to answer`)
  const answered = new Set<string>()
  const tools: AiMessage[] = []
  for (const m of outputs) {
    // function_call items the client echoes back are the calls already known
    if (
      m.role === 'assistant' &&
      m.content === '' &&
      (m.toolCalls ?? []).every((c) => calls.some((k) => k.id === c.id))
    )
      continue
    if (m.role !== 'tool') throw invalid('input', 'an input answering function calls holds only their outputs')
    if (!calls.some((c) => c.id === m.toolCallId) || answered.has(m.toolCallId))
      throw invalid('input', `no pending function call has the call_id '${m.toolCallId}'`)
    answered.add(m.toolCallId)
    tools.push({ ...m, name: calls.find((c) => c.id === m.toolCallId)!.name })
  }
  const missing = calls.find((c) => !answered.has(c.id))
  if (missing !== undefined) throw invalid('input', `no function_call_output for the call '${missing.id}'`)
  const said: AiToolCall[] = calls
  return {
    message: before.message,
    continuation: [
      ...before.continuation,
      { role: 'assistant', content: previous.finalText ?? '', toolCalls: said },
      ...tools
    ]
  }
}
