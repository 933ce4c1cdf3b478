/**
 * One governed agent turn: guardrails and pre-admission policies (through the governance gate,
 * which records every evaluation), the scope preamble, the governance feedback (recent deny and
 * prefer decisions of the subject), the runtime with the agent loop (tool calls through the
 * tool-call gate and the tool's own sandbox), then post-response policies.
 * The output is a stream of turn events ending in exactly one terminal event; it never throws.
 */
import type { Platform } from '../platform.js'
import { aiRequest, governanceOf, type AiRequest } from '../governance/index.js'
import { confineSystemPrompt } from '../scope/index.js'
import { getMcp } from '../mcp/index.js'
import { carriedLines, feedbackLines, withFeedback, type FeedbackOptions } from './feedback.js'
import type { CancelSignal, RegisteredAgent } from '../plugins/index.js'
import type { AiCancelSignal, AiMessage, AiRuntime, AiToolCall, AiToolSpec, TokenUsage } from './runtime.js'

export interface TurnRequest {
  /** The agent whose system prompt, tools and model the turn uses; none: a bare turn with no tools. */
  agent?: string
  message: string
  /** Replaces the agent's system prompt (the scope preamble is still prepended). */
  systemPrompt?: string
  history?: AiMessage[]
  /** A runtime name (that runtime answers) or a model name for the active runtime; the agent's `model` when absent. */
  model?: string
  userId?: string
  sessionId?: string
  conversationId?: string
  metadata?: Record<string, unknown>
}

export type TurnErrorCode =
  'denied' | 'cancelled' | 'runtime' | 'no-runtime' | 'unknown-agent' | 'bad-request' | 'max-tool-rounds'

export type TurnEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-start'; call: AiToolCall }
  | { type: 'tool-result'; id: string; name: string; content: string }
  | { type: 'tool-error'; id: string; name: string; message: string }
  | { type: 'usage'; usage: TokenUsage }
  /** Governance guidance the final system prompt carried; sent just before `complete`, only when some was injected. */
  | { type: 'feedback'; injected: number; lines: string[] }
  | {
      type: 'complete'
      text: string
      preferences: { policy: string; preferred: string; reason: string }[]
      /** The user message as admitted (after any transform): what conversation memory may keep. */
      userMessage: string
    }
  | { type: 'error'; code: TurnErrorCode; message: string; policy?: string }

/** What a turn needs from the platform; the AI area builds it once. */
export interface TurnDeps {
  platform: Platform
  /** The runtime `platform.ai.runtime` selects. */
  activeRuntime: () => AiRuntime | undefined
  runtime: (name: string) => AiRuntime | undefined
  maxToolRounds: number
  /** The learning-signal loop's bounds (see feedback.ts). */
  feedback: FeedbackOptions
}

const fail = (code: TurnErrorCode, message: string, policy?: string): TurnEvent =>
  policy === undefined ? { type: 'error', code, message } : { type: 'error', code, message, policy }

/** Runs one turn; see the module comment. Aborting `signal` ends it with an error `cancelled`. */
export async function* runTurn(deps: TurnDeps, req: TurnRequest, signal?: AiCancelSignal): AsyncGenerator<TurnEvent> {
  try {
    yield* turn(deps, req, signal)
  } catch (err) {
    yield fail('runtime', `turn failed: ${err instanceof Error ? err.message : String(err)}`)
  }
}

async function* turn(deps: TurnDeps, req: TurnRequest, signal?: AiCancelSignal): AsyncGenerator<TurnEvent> {
  if (typeof req?.message !== 'string') {
    yield fail('bad-request', "a turn needs 'message' (a string)")
    return
  }
  if (req.history !== undefined && !Array.isArray(req.history)) {
    yield fail('bad-request', "'history' must be an array of messages")
    return
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
    metadata: { ...(req.metadata ?? {}) }
  })
  const gov = governanceOf(platform)
  const preferences: { policy: string; preferred: string; reason: string }[] = []
  if (gov !== undefined) {
    // guardrails sit first in the chain, so one admission covers guardrails then policies
    const a = await gov.gate.admit(resource, request)
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
      guidance = feedbackLines(gov, request, deps.feedback)
      if (guidance.length > 0) systemPrompt = withFeedback(systemPrompt, guidance)
    } catch (err) {
      // advisory only: a broken read never breaks the turn
      guidance = []
      platform.logger.warn({ err, agent: agent?.name }, 'governance feedback failed; the turn goes on without it')
    }
  }
  const text: string[] = []
  let closed = gov === undefined
  try {
    const input: LoopInput = { systemPrompt, request, agent, history: req.history ?? [] }
    const events = agent?.run !== undefined ? ownRun(agent, input, signal) : viaRuntime(deps, input, signal)
    for await (const e of events) {
      if (e.type === 'text') text.push(e.delta)
      yield e
      if (e.type === 'error') return
    }
    const full = text.join('')
    if (gov !== undefined) {
      closed = true
      const after = await gov.gate.afterResponse(resource, request, full)
      if (!after.admitted) {
        yield fail('denied', `response denied by policy ${after.policy.name}: ${after.reason}`, after.policy.name)
        return
      }
    }
    const lines = carriedLines(input.systemPrompt, guidance)
    if (lines.length > 0) yield { type: 'feedback', injected: lines.length, lines }
    yield { type: 'complete', text: full, preferences, userMessage: request.message }
  } finally {
    // a turn that ends early (error, cancellation, a consumer that stops reading) still closes
    // its post-response phase, so per-turn policy state such as a concurrency slot is released
    if (!closed && gov !== undefined) {
      try {
        await gov.gate.afterResponse(resource, request, text.join(''))
      } catch {
        /* the gate records its own failures */
      }
    }
  }
}

interface LoopInput {
  systemPrompt: string
  request: AiRequest
  agent: RegisteredAgent | undefined
  history: AiMessage[]
}

/** The runtime `model` names, else the active one with `model` as its model name; then the loop. */
async function* viaRuntime(deps: TurnDeps, input: LoopInput, signal?: AiCancelSignal): AsyncGenerator<TurnEvent> {
  const wanted = input.request.model
  const named = wanted !== null ? deps.runtime(wanted) : undefined
  const runtime = named ?? deps.activeRuntime()
  if (runtime === undefined) {
    yield fail('no-runtime', 'no AI runtime is active (check platform.ai.runtime)')
    return
  }
  yield* loop(deps, runtime, input, named === undefined && wanted !== null ? wanted : undefined, signal)
}

/** An agent's own `run(turn, ctx)` in its plugin's sandbox: it returns the answer, a string or `{ text }`. */
async function* ownRun(agent: RegisteredAgent, input: LoopInput, signal?: AiCancelSignal): AsyncGenerator<TurnEvent> {
  const turn = { message: input.request.message, systemPrompt: input.systemPrompt, history: input.history }
  let out: unknown
  try {
    out = await agent.run!(turn, signal !== undefined ? { signal: signal as CancelSignal } : {})
  } catch (err) {
    yield fail('runtime', `agent '${agent.name}' run() failed: ${err instanceof Error ? err.message : String(err)}`)
    return
  }
  if (signal?.aborted === true) {
    yield fail('cancelled', 'the turn was cancelled')
    return
  }
  const text =
    typeof out === 'string'
      ? out
      : typeof (out as { text?: unknown } | null)?.text === 'string'
        ? (out as { text: string }).text
        : undefined
  if (text === undefined) {
    yield fail('runtime', `agent '${agent.name}' run() must return a string or { text }`)
    return
  }
  yield { type: 'text', delta: text }
}

/** The default agent loop; ends with an `error` event or simply returns once the model completes. */
async function* loop(
  deps: TurnDeps,
  runtime: AiRuntime,
  input: LoopInput,
  model: string | undefined,
  signal?: AiCancelSignal
): AsyncGenerator<TurnEvent> {
  const { platform } = deps
  const view = input.agent !== undefined ? getMcp(platform)?.registry.view(input.agent.name) : undefined
  const tools: AiToolSpec[] = (view?.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema
  }))
  const history: AiMessage[] = [...input.history]
  let message: string | undefined = input.request.message
  for (let round = 0; ; round++) {
    const calls: AiToolCall[] = []
    let said = ''
    const stream = runtime.stream(
      {
        systemPrompt: input.systemPrompt,
        history,
        ...(message !== undefined ? { message } : {}),
        ...(tools.length > 0 ? { tools } : {}),
        ...(model !== undefined ? { model } : {})
      },
      signal
    )
    for await (const e of stream) {
      switch (e.type) {
        case 'text':
          said += e.delta
          yield e
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
    history.push({ role: 'assistant', content: said, toolCalls: calls })
    for (const call of calls) {
      yield { type: 'tool-start', call }
      const out = await runTool(platform, view, input, call, signal)
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
  }
}

type View = ReturnType<NonNullable<ReturnType<typeof getMcp>>['registry']['view']>

async function runTool(
  platform: Platform,
  view: View | undefined,
  input: LoopInput,
  call: AiToolCall,
  signal?: AiCancelSignal
): Promise<{ ok: boolean; text: string }> {
  const tool = view?.toolsByName.get(call.name)
  if (tool === undefined) return { ok: false, text: `unknown tool '${call.name}'` }
  const r = input.request
  try {
    const verdict = await platform.toolCallGate({
      toolName: call.name,
      args: call.arguments,
      ...(r.agentId !== null ? { agentId: r.agentId } : {}),
      principal: r.userId,
      ...(r.sessionId !== null ? { sessionId: r.sessionId } : {})
    })
    if (!verdict.admitted) return { ok: false, text: `tool call denied by policy ${verdict.policy}: ${verdict.reason}` }
    if (!tool.validate(call.arguments)) return { ok: false, text: `invalid arguments for tool '${call.name}'` }
    const ac = new AbortController()
    const onAbort = (): void => ac.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const result = await tool.invoke(call.arguments as Record<string, never>, {
        signal: ac.signal,
        progress: () => {},
        clientCapabilities: {},
        principal: r.userId,
        ...(r.sessionId !== null ? { sessionId: r.sessionId } : {})
      })
      return { ok: true, text: typeof result === 'string' ? result : (JSON.stringify(result) ?? '') }
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  } catch (err) {
    return { ok: false, text: `tool '${call.name}' failed: ${err instanceof Error ? err.message : String(err)}` }
  }
}
