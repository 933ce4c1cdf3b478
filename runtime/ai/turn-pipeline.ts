/**
 * One governed agent turn: guardrails and pre-admission policies (through the governance gate,
 * which records every evaluation), the scope preamble, the governance feedback (recent deny and
 * prefer decisions of the subject), the runtime with the agent loop (tool calls through the
 * tool-call gate and the tool's own sandbox), then post-response policies.
 * The output is a stream of turn events ending in exactly one terminal event; it never throws.
 */
import { aiRequest, type AiRequest } from '../contracts/index.js'
import { governanceOf } from '../governance/index.js'
import { confineSystemPrompt } from '../scope/index.js'
import { carriedLines, feedbackLines, withFeedback } from './feedback.js'
import type { RegisteredAgent } from '../plugins/index.js'
import type { AiCancelSignal, AiMessage, AiRuntime, AiRuntimeRequest, AiToolCall, AiToolSpec } from './runtime.js'
import { ownRun, pickRuntime } from './agent-run.js'
import type { TurnDeps, TurnErrorCode, TurnEvent, TurnRequest, TurnTextSink } from './turn-types.js'
import { gateClientTool, runTool, type LoopInput } from './tool-run.js'
import { TextBuffer } from './text-buffer.js'

export type { TurnDeps, TurnErrorCode, TurnEvent, TurnRequest, TurnTextSink } from './turn-types.js'

/** A request's fields that must be arrays, and those that must be objects, when present. */
const ARRAY_FIELDS = ['history', 'clientTools', 'continuation', 'roles', 'images'] as const
const OBJECT_FIELDS = ['facts', 'clientMetadata'] as const

const fail = (code: TurnErrorCode, message: string, policy?: string): TurnEvent =>
  policy === undefined ? { type: 'error', code, message } : { type: 'error', code, message, policy }

/**
 * Runs one turn; see the module comment. Aborting `signal` ends it with an error `cancelled`.
 * One generator from the request to the runtime's events (no wrapper delegating to another):
 * every layer a streamed token passes costs it a promise and a microtask. With `onText`, text
 * deltas go there instead of out as events (see TurnTextSink).
 */
export async function* runTurn(
  deps: TurnDeps,
  req: TurnRequest,
  signal?: AiCancelSignal,
  onText?: TurnTextSink
): AsyncGenerator<TurnEvent> {
  try {
    if (typeof req?.message !== 'string') {
      yield fail('bad-request', "a turn needs 'message' (a string)")
      return
    }
    for (const k of ARRAY_FIELDS)
      if (req[k] !== undefined && !Array.isArray(req[k])) {
        yield fail('bad-request', `'${k}' must be an array`)
        return
      }
    for (const k of OBJECT_FIELDS) {
      const v = req[k]
      if (v !== undefined && (typeof v !== 'object' || v === null || Array.isArray(v))) {
        yield fail('bad-request', `'${k}' must be an object`)
        return
      }
    }
    const { platform } = deps
    let agent: RegisteredAgent | undefined
    if (req.agent !== undefined) {
      agent = platform.plugins.agents().find((a) => a.name === req.agent)
      if (agent === undefined) {
        yield fail('unknown-agent', `no loaded plugin contributes an agent named '${req.agent}'`)
        return
      }
    }
    const resource = `ai:agent:${agent?.name ?? '-'}`
    let request: AiRequest = aiRequest({
      message: req.message,
      systemPrompt: req.systemPrompt ?? agent?.systemPrompt ?? '',
      model: req.model ?? agent?.model ?? null,
      userId: req.userId ?? null,
      sessionId: req.sessionId ?? null,
      agentId: agent?.name ?? null,
      conversationId: req.conversationId ?? null,
      metadata: serverMetadata(req),
      clientMetadata: { ...(req.clientMetadata ?? {}) }
    })
    const gov = governanceOf(platform)
    const preferences: { policy: string; preferred: string; reason: string }[] = []
    if (gov !== undefined) {
      // guardrails sit first in the chain, so one admission covers guardrails then policies
      const admitted = gov.gate.admit(resource, request)
      // a chain of synchronous policies answers at once: nothing to await
      const a = admitted instanceof Promise ? await admitted : admitted
      if (!a.admitted) {
        yield fail('denied', `denied by policy ${a.policy.name}: ${a.reason}`, a.policy.name)
        return
      }
      request = a.request
      for (const p of a.preferences) preferences.push({ policy: p.name, preferred: p.preferred, reason: p.reason })
    }
    // after any transform: the preamble leads whatever prompt reaches the model
    let systemPrompt = gov !== undefined ? confineSystemPrompt(request, gov.chain.policies) : request.systemPrompt
    // after admission, so a Prefer recorded just now steers this same turn
    let guidance: string[] = []
    if (gov !== undefined) {
      try {
        const lines = feedbackLines(gov, request, deps.feedback)
        // answered at once unless the memory sink is read: no await (and no microtask) for nothing
        guidance = lines instanceof Promise ? await lines : lines
        if (guidance.length > 0) systemPrompt = withFeedback(systemPrompt, guidance)
      } catch (err) {
        // advisory only: a broken read never breaks the turn
        guidance = []
        platform.logger.warn({ err, agent: agent?.name }, 'governance feedback failed; the turn goes on without it')
      }
    }
    const text = new TextBuffer()
    let closed = gov === undefined
    try {
      // a run() that brings its own system prompt gets the same preamble and guidance
      const framePrompt = (own: string): string => {
        const confined =
          gov !== undefined ? confineSystemPrompt({ ...request, systemPrompt: own }, gov.chain.policies) : own
        return guidance.length > 0 ? withFeedback(confined, guidance) : confined
      }
      const input: LoopInput = {
        systemPrompt,
        framePrompt,
        request,
        agent,
        history: req.history ?? [],
        clientTools: req.clientTools ?? [],
        continuation: req.continuation ?? [],
        images: req.images ?? [],
        maxOutputTokens: req.maxOutputTokens,
        responseFormat: req.responseFormat,
        truncated: false,
        text
      }
      if (agent?.run !== undefined && (input.images.length > 0 || input.responseFormat !== undefined)) {
        const what = input.images.length > 0 ? 'no images' : 'no response format'
        yield fail('bad-request', `agent '${agent.name}' runs its own turn, which takes ${what}`)
        return
      }
      // the default loop hands its deltas to the sink itself: one layer fewer per token
      const sink =
        onText === undefined
          ? undefined
          : (delta: string): void | Promise<void> => {
              text.push(delta)
              return onText(delta)
            }
      const events =
        agent?.run !== undefined ? ownRun(deps, agent, input, signal) : viaRuntime(deps, input, signal, sink)
      for await (const e of events) {
        if (e.type === 'text') {
          text.push(e.delta)
          if (onText !== undefined) {
            const wait = onText(e.delta)
            if (wait !== undefined) await wait
            continue
          }
        }
        yield e
        if (e.type === 'error') return
      }
      const full = text.text()
      if (gov !== undefined) {
        closed = true
        const answered = gov.gate.afterResponse(resource, request, full)
        const after = answered instanceof Promise ? await answered : answered
        if (!after.admitted) {
          yield fail('denied', `response denied by policy ${after.policy.name}: ${after.reason}`, after.policy.name)
          return
        }
      }
      const lines = guidance.length > 0 ? carriedLines(input.systemPrompt, guidance) : guidance
      if (lines.length > 0) yield { type: 'feedback', injected: lines.length, lines }
      yield input.truncated
        ? { type: 'complete', text: full, preferences, userMessage: request.message, truncated: true }
        : { type: 'complete', text: full, preferences, userMessage: request.message }
    } finally {
      // a turn that ends early (error, cancellation, a consumer that stops reading) still closes
      // its post-response phase, so per-turn policy state such as a concurrency slot is released
      if (!closed && gov !== undefined) {
        try {
          await gov.gate.afterResponse(resource, request, text.text())
        } catch {
          /* the gate records its own failures */
        }
      }
    }
  } catch (err) {
    yield fail('runtime', `turn failed: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/**
 * What policies read as facts: the entry point's own facts and the credentials' roles. Client
 * metadata never lands here, so no entry point can let a client claim an identity, a role or a
 * tool call (`action: call_tool` makes scope step aside).
 */
function serverMetadata(req: TurnRequest): Record<string, unknown> {
  const md: Record<string, unknown> = { ...(req.facts ?? {}) }
  delete md.roles
  if (req.roles !== undefined && req.roles.length > 0) md.roles = [...req.roles]
  return md
}

/**
 * The runtime `model` names, else the active one with `model` as its model name; then the loop
 * (returned, not delegated to: a generator in between would be one more hop per token).
 */
function viaRuntime(
  deps: TurnDeps,
  input: LoopInput,
  signal?: AiCancelSignal,
  sink?: TurnTextSink
): AsyncGenerator<TurnEvent> {
  const picked = pickRuntime(deps, input.request)
  if (picked === undefined) return only(fail('no-runtime', 'no AI runtime is active (check platform.ai.runtime)'))
  // a runtime that cannot see images must not answer as if it had
  if (input.images.length > 0 && !picked.runtime.capabilities.includes('image-input'))
    return only(fail('bad-request', `runtime '${picked.runtime.name}' does not take image input`))
  // nor may one that cannot keep to a format answer as if it had
  if (input.responseFormat !== undefined && !picked.runtime.capabilities.includes('structured-output'))
    return only(fail('bad-request', `runtime '${picked.runtime.name}' cannot answer in a response format`))
  return loop(deps, picked.runtime, input, picked.model, signal, sink)
}

/** Never added to: `loop` hands it to turns without client tools. */
const NO_TOOLS = new Set<string>()

async function* only(e: TurnEvent): AsyncGenerator<TurnEvent> {
  yield e
}

/**
 * The default agent loop; ends with an `error` event or simply returns once the model completes.
 * Text deltas go to `sink` when there is one, else out as events.
 */
async function* loop(
  deps: TurnDeps,
  runtime: AiRuntime,
  input: LoopInput,
  model: string | undefined,
  signal?: AiCancelSignal,
  sink?: TurnTextSink
): AsyncGenerator<TurnEvent> {
  const { platform } = deps
  const offered = input.agent !== undefined ? deps.agentTools(input.agent.name) : undefined
  const tools: AiToolSpec[] = (offered?.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema
  }))
  // the client's own tools beside the agent's; the agent's keep their name (a turn without any
  // shares one empty set: most turns bring none, and a Set costs more than the rest of the setup)
  const clientTools = input.clientTools.length > 0 ? new Set<string>() : NO_TOOLS
  for (const t of input.clientTools)
    if (offered?.byName.has(t.name) !== true && !clientTools.has(t.name)) {
      clientTools.add(t.name)
      tools.push(t)
    }
  const history: AiMessage[] = [...input.history]
  let message: string | undefined = input.request.message
  // the images go with the user message, once: a later round has it in the history as text
  let images = input.images
  if (input.continuation.length > 0) {
    // the model already saw the message and asked for tools: it answers their results now
    history.push({ role: 'user', content: message }, ...input.continuation)
    message = undefined
  }
  for (let round = 0; ; round++) {
    const calls: AiToolCall[] = []
    // this round's text is what the turn's answer gains from here (runTurn pushes every delta)
    const said = input.text.length
    // fields set one by one: a conditional spread builds an object of its own per field
    const ask: AiRuntimeRequest = { systemPrompt: input.systemPrompt, history }
    if (message !== undefined) {
      ask.message = message
      if (images.length > 0) ask.images = images
    }
    if (tools.length > 0) ask.tools = tools
    if (model !== undefined) ask.model = model
    if (input.maxOutputTokens !== undefined) ask.maxOutputTokens = input.maxOutputTokens
    if (input.responseFormat !== undefined) ask.responseFormat = input.responseFormat
    const stream = runtime.stream(ask, signal, sink)
    for await (const e of stream) {
      switch (e.type) {
        case 'text':
          if (sink !== undefined) {
            // a sink that answers a promise holds the turn until its reader can take more
            const wait = sink(e.delta)
            if (wait !== undefined) await wait
          } else yield e
          break
        case 'usage':
          yield e
          break
        case 'tool-call':
          calls.push(e.call)
          break
        case 'error':
          yield fail(e.code === 'cancelled' ? 'cancelled' : 'runtime', `runtime '${runtime.name}': ${e.message}`)
          return
        case 'done':
          if (e.finishReason === 'cancelled') {
            yield fail('cancelled', 'the turn was cancelled')
            return
          }
          if (e.finishReason === 'length') input.truncated = true
          break
      }
    }
    if (signal?.aborted === true) {
      yield fail('cancelled', 'the turn was cancelled')
      return
    }
    if (calls.length === 0) return
    if (round >= deps.maxToolRounds) {
      yield fail(
        'max-tool-rounds',
        `the model still asked for tools after ${deps.maxToolRounds} rounds (platform.ai.max-tool-rounds)`
      )
      return
    }
    if (message !== undefined) history.push({ role: 'user', content: message })
    message = undefined
    images = []
    history.push({ role: 'assistant', content: input.text.since(said), toolCalls: calls })
    const forClient: AiToolCall[] = []
    for (const call of calls) {
      if (clientTools.has(call.name)) {
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
      const out = await runTool(platform, offered, input, call, signal)
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
      for (const call of forClient) yield { type: 'tool-start', call, client: true }
      return
    }
  }
}
