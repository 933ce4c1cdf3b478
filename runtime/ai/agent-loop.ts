/**
 * The default agent loop's state across its rounds: the tools the model is offered, the history
 * it sees, and the tool calls of the round being read. runTurn reads each round's runtime stream
 * itself and hands every event to `take`, a plain call: a generator between the runtime and the
 * turn cost each event a promise, a result object and a resumption.
 */
import type { OfferedTools } from './agent-tools.js'
import type {
  AiCancelSignal,
  AiEvent,
  AiMessage,
  AiRuntime,
  AiRuntimeRequest,
  AiToolCall,
  AiToolSpec
} from './runtime.js'
import { gateClientTool, runTool, type LoopInput } from './tool-run.js'
import type { TurnDeps, TurnErrorCode, TurnEvent, TurnTextSink } from './turn-types.js'

const fail = (code: TurnErrorCode, message: string): TurnEvent => ({ type: 'error', code, message })

/** Never added to: turns without client tools share it. */
const NO_TOOLS = new Set<string>()
/** Never added to: turns offered no tool share it. */
const NO_SPECS: AiToolSpec[] = []
/** Never added to: the calls before the first round. */
const NO_CALLS: AiToolCall[] = []

export class AgentLoop {
  /** Set once the turn ends with the client's tool calls: their results come in the next turn. */
  handedOver = false
  private readonly offered: OfferedTools | undefined
  private readonly tools: AiToolSpec[]
  private readonly clientTools: Set<string>
  private readonly history: AiMessage[]
  private message: string | undefined
  // the images go with the user message, once: a later round has it in the history as text
  private images: string[]
  private round = -1
  /** This round's tool calls: a new list each round, set by `stream`. */
  private calls: AiToolCall[] = NO_CALLS
  /** Where this round's text starts in the turn's answer (runTurn pushes every delta). */
  private said = 0

  constructor(
    private readonly deps: TurnDeps,
    private readonly runtime: AiRuntime,
    private readonly input: LoopInput,
    private readonly model: string | undefined,
    private readonly signal: AiCancelSignal | undefined,
    private readonly sink: TurnTextSink | undefined
  ) {
    this.offered = input.agent !== undefined ? deps.agentTools(input.agent.name) : undefined
    const own = this.offered?.tools ?? NO_SPECS
    // a turn offered no tool at all shares one empty list (tools are added only beside client ones)
    this.tools =
      own.length === 0 && input.clientTools.length === 0
        ? NO_SPECS
        : own.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))
    // the client's own tools beside the agent's; the agent's keep their name (a turn without any
    // shares one empty set: most turns bring none, and a Set costs more than the rest of the setup)
    this.clientTools = input.clientTools.length > 0 ? new Set<string>() : NO_TOOLS
    for (const t of input.clientTools)
      if (this.offered?.byName.has(t.name) !== true && !this.clientTools.has(t.name)) {
        this.clientTools.add(t.name)
        this.tools.push(t)
      }
    this.history = [...input.history]
    this.message = input.request.message
    this.images = input.images
    if (input.continuation.length > 0) {
      // the model already saw the message and asked for tools: it answers their results now
      this.history.push({ role: 'user', content: this.message }, ...input.continuation)
      this.message = undefined
    }
  }

  /** The next round's runtime stream; text deltas go to the sink when there is one. */
  stream(): AsyncIterable<AiEvent> {
    const { input } = this
    this.round++
    this.calls = []
    this.said = input.text.length
    // fields set one by one: a conditional spread builds an object of its own per field
    const ask: AiRuntimeRequest = { systemPrompt: input.systemPrompt, history: this.history }
    if (this.message !== undefined) {
      ask.message = this.message
      if (this.images.length > 0) ask.images = this.images
    }
    if (this.tools.length > 0) ask.tools = this.tools
    if (this.model !== undefined) ask.model = this.model
    if (input.maxOutputTokens !== undefined) ask.maxOutputTokens = input.maxOutputTokens
    if (input.responseFormat !== undefined) ask.responseFormat = input.responseFormat
    return this.runtime.stream(ask, this.signal, this.sink)
  }

  /** One event of the round: what the turn passes on for it (an error ends the turn), or nothing. */
  take(e: AiEvent): TurnEvent | undefined {
    switch (e.type) {
      case 'text':
      case 'usage':
        return e
      case 'tool-call':
        this.calls.push(e.call)
        return undefined
      case 'error':
        return fail(e.code === 'cancelled' ? 'cancelled' : 'runtime', `runtime '${this.runtime.name}': ${e.message}`)
      case 'done':
        if (e.finishReason === 'cancelled') return fail('cancelled', 'the turn was cancelled')
        if (e.finishReason === 'length') this.input.truncated = true
        return undefined
    }
  }

  /** After a round's stream: the error that ends the turn, true when tools are to run, false when answered. */
  endRound(): TurnEvent | boolean {
    if (this.signal?.aborted === true) return fail('cancelled', 'the turn was cancelled')
    if (this.calls.length === 0) return false
    if (this.round >= this.deps.maxToolRounds)
      return fail(
        'max-tool-rounds',
        `the model still asked for tools after ${this.deps.maxToolRounds} rounds (platform.ai.max-tool-rounds)`
      )
    return true
  }

  /** The round's tool calls, run or handed to the client; their results join the history for the next round. */
  async *runTools(): AsyncGenerator<TurnEvent> {
    const { input, history, calls } = this
    const { platform } = this.deps
    if (this.message !== undefined) history.push({ role: 'user', content: this.message })
    this.message = undefined
    this.images = []
    history.push({ role: 'assistant', content: input.text.since(this.said), toolCalls: calls })
    const forClient: AiToolCall[] = []
    for (const call of calls) {
      if (this.clientTools.has(call.name)) {
        const denied = await gateClientTool(platform, input, call)
        if (denied === undefined) {
          forClient.push(call)
          continue
        }
        // refused: the model reads the denial as the call's result, as it would a server tool's
        yield { type: 'tool-start', call }
        yield { type: 'tool-error', id: call.id, name: call.name, message: denied }
        history.push({ role: 'tool', toolCallId: call.id, name: call.name, content: `error: ${denied}` })
        continue
      }
      yield { type: 'tool-start', call }
      const out = await runTool(platform, this.offered, input, call, this.signal)
      if (out.ok) yield { type: 'tool-result', id: call.id, name: call.name, content: out.text }
      else yield { type: 'tool-error', id: call.id, name: call.name, message: out.text }
      // a failed tool is still an answer: the model sees the error and may recover
      history.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: out.ok ? out.text : `error: ${out.text}`
      })
    }
    // the client runs its tools: the turn ends with their calls, their results come in the next one
    if (forClient.length > 0) {
      this.handedOver = true
      for (const call of forClient) yield { type: 'tool-start', call, client: true }
    }
  }
}
