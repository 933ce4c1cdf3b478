/**
 * An agent's own `run(turn, ctx)` in its plugin's sandbox. It streams text with
 * `ctx.progress({ text })`, reports steps with `ctx.progress({ step })`, calls the turn's model
 * with `ctx.model(...)` and the agent's tools with `ctx.callTool(...)`, and returns the rest of its
 * answer, a string or `{ text }` (nothing at all once it has streamed some).
 */
import { Cancellation, type AgentTurnHandlers, type RegisteredAgent } from '../plugins/index.js'
import type { AiRequest } from '../contracts/index.js'
import type { OfferedTools } from './agent-tools.js'
import type { AiCancelSignal, AiMessage, AiRuntime, AiToolCall, AiToolSpec, TokenUsage } from './runtime.js'
import { runTool, type LoopInput } from './tool-run.js'
import type { TurnDeps, TurnErrorCode, TurnEvent } from './turn-types.js'

const fail = (code: TurnErrorCode, message: string): TurnEvent => ({ type: 'error', code, message })

/** The runtime the request's `model` names, else the active one with `model` as its model name. */
export function pickRuntime(deps: TurnDeps, request: AiRequest): { runtime: AiRuntime; model?: string } | undefined {
  const wanted = request.model
  const named = wanted !== null ? deps.runtime(wanted) : undefined
  const runtime = named ?? deps.activeRuntime()
  if (runtime === undefined) return undefined
  return named === undefined && wanted !== null ? { runtime, model: wanted } : { runtime }
}

export async function* ownRun(
  deps: TurnDeps,
  agent: RegisteredAgent,
  input: LoopInput,
  signal?: AiCancelSignal
): AsyncGenerator<TurnEvent> {
  const turn = { message: input.request.message, systemPrompt: input.systemPrompt, history: input.history }
  const queue: TurnEvent[] = []
  let wake: (() => void) | undefined
  const push = (e: TurnEvent): void => {
    queue.push(e)
    wake?.()
  }
  const onProgress = (partial: unknown): void => {
    if (partial === null || typeof partial !== 'object') return
    const p = partial as { text?: unknown; step?: unknown }
    if (typeof p.text === 'string' && p.text !== '') push({ type: 'text', delta: p.text })
    const step = agentStep(p.step)
    if (step !== undefined) push(step)
  }
  // whatever ends the turn (completion, failure, cancellation, a consumer that stops reading)
  // also stops the run in its sandbox, the model and tool calls still in flight, and closes the
  // turn to further host calls
  const ended = new Cancellation()
  const onAbort = (): void => ended.abort()
  if (signal?.aborted === true) ended.abort()
  else signal?.addEventListener('abort', onAbort, { once: true })
  const turns = deps.platform.plugins.agentTurns
  const turnId = turns.begin(agent.plugin, hostHandlers(deps, agent, input, push, ended))
  try {
    let settled = false
    let failure: { err: unknown } | undefined
    let out: unknown
    void agent.run!(turn, { signal: ended, onProgress }, turnId)
      .then(
        (v) => {
          out = v
        },
        (err: unknown) => {
          failure = { err }
        }
      )
      .finally(() => {
        settled = true
        wake?.()
      })
    let streamed = false
    for (;;) {
      while (queue.length > 0) {
        const e = queue.shift()!
        if (e.type === 'text') streamed = true
        yield e
      }
      if (settled) break
      await new Promise<void>((resolve) => (wake = resolve))
      wake = undefined
    }
    // a cancelled run may fail with the sandbox's abort error: it is still a cancellation
    if (signal?.aborted === true) {
      yield fail('cancelled', 'the turn was cancelled')
      return
    }
    if (failure !== undefined) {
      const { err } = failure
      yield fail('runtime', `agent '${agent.name}' run() failed: ${err instanceof Error ? err.message : String(err)}`)
      return
    }
    if (out == null && streamed) return
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
    if (text !== '' || !streamed) yield { type: 'text', delta: text }
  } finally {
    turns.end(turnId)
    ended.abort()
    signal?.removeEventListener('abort', onAbort)
  }
}

function agentStep(raw: unknown): TurnEvent | undefined {
  if (raw === null || typeof raw !== 'object') return undefined
  const s = raw as { name?: unknown; description?: unknown; data?: unknown }
  if (typeof s.name !== 'string' || s.name === '') return undefined
  return {
    type: 'agent-step',
    name: s.name,
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
    ...(s.data !== undefined ? { data: s.data } : {})
  }
}

/** The answers to the run's `ctx.model` and `ctx.callTool`, through the same paths the default loop takes. */
function hostHandlers(
  deps: TurnDeps,
  agent: RegisteredAgent,
  input: LoopInput,
  push: (e: TurnEvent) => void,
  signal: Cancellation
): AgentTurnHandlers {
  let offered: OfferedTools | undefined
  const tools = (): OfferedTools => (offered ??= deps.agentTools(agent.name))
  let calls = 0
  const fleet = deps.runExtension?.({
    agent,
    request: input.request,
    signal,
    step: (name, description, data) =>
      push({
        type: 'agent-step',
        name,
        ...(description !== undefined ? { description } : {}),
        ...(data !== undefined ? { data } : {})
      })
  })
  return {
    ...(fleet !== undefined ? { fleet } : {}),
    async model(raw) {
      const o = modelOptions(raw, tools())
      const picked = pickRuntime(deps, input.request)
      if (picked === undefined) throw new Error('no AI runtime is active (check platform.ai.runtime)')
      const { runtime, model } = picked
      const stream = runtime.stream(
        {
          systemPrompt: o.systemPrompt !== undefined ? input.framePrompt(o.systemPrompt) : input.systemPrompt,
          history: o.messages ?? input.history,
          ...(o.messages === undefined ? { message: input.request.message } : {}),
          ...(o.tools.length > 0 ? { tools: o.tools } : {}),
          ...(model !== undefined ? { model } : {})
        },
        signal
      )
      let text = ''
      const toolCalls: AiToolCall[] = []
      let usage: TokenUsage | null = null
      for await (const e of stream) {
        if (e.type === 'text') text += e.delta
        else if (e.type === 'tool-call') toolCalls.push(e.call)
        else if (e.type === 'usage') {
          usage = e.usage
          push(e)
        } else if (e.type === 'error') throw new Error(`runtime '${runtime.name}': ${e.message}`)
      }
      if (signal.aborted) throw new Error('the model call was cancelled: the turn ended')
      return { text, toolCalls, usage }
    },
    async callTool(name, args) {
      if (args === null || typeof args !== 'object' || Array.isArray(args))
        throw new TypeError(`callTool('${name}'): the arguments must be an object`)
      const call: AiToolCall = { id: `run-${++calls}`, name, arguments: args as Record<string, unknown> }
      push({ type: 'tool-start', call })
      const out = await runTool(deps.platform, tools(), input, call, signal)
      if (out.ok) push({ type: 'tool-result', id: call.id, name, content: out.text })
      else push({ type: 'tool-error', id: call.id, name, message: out.text })
      return out
    }
  }
}

const ROLES = new Set(['user', 'assistant', 'tool'])

/** `ctx.model`'s options, checked: a bad one is the run's error and calls nothing. */
function modelOptions(
  raw: unknown,
  offered: OfferedTools
): { messages?: AiMessage[]; systemPrompt?: string; tools: AiToolSpec[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new TypeError('model(): the options must be an object { messages?, systemPrompt?, tools? }')
  const o = raw as { messages?: unknown; systemPrompt?: unknown; tools?: unknown }
  const out: { messages?: AiMessage[]; systemPrompt?: string; tools: AiToolSpec[] } = { tools: [] }
  if (o.messages !== undefined) {
    if (
      !Array.isArray(o.messages) ||
      !o.messages.every(
        (m: unknown) =>
          m !== null &&
          typeof m === 'object' &&
          ROLES.has((m as { role?: unknown }).role as string) &&
          typeof (m as { content?: unknown }).content === 'string'
      )
    )
      throw new TypeError("model(): 'messages' must be an array of { role: 'user' | 'assistant' | 'tool', content }")
    out.messages = o.messages as AiMessage[]
  }
  if (o.systemPrompt !== undefined) {
    if (typeof o.systemPrompt !== 'string') throw new TypeError("model(): 'systemPrompt' must be a string")
    out.systemPrompt = o.systemPrompt
  }
  if (o.tools !== undefined) {
    if (!Array.isArray(o.tools) || !o.tools.every((t) => typeof t === 'string'))
      throw new TypeError("model(): 'tools' must be an array of the agent's tool names")
    for (const name of o.tools as string[]) {
      const t = offered.byName.get(name)
      if (t === undefined) throw new Error(`model(): '${name}' is not one of this agent's tools`)
      out.tools.push({ name: t.name, description: t.description, inputSchema: t.inputSchema })
    }
  }
  return out
}
