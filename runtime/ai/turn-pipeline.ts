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
import type { AiCancelSignal, AiEvent, AiRuntime } from './runtime.js'
import { ownRun, pickRuntime } from './agent-run.js'
import { AgentLoop } from './agent-loop.js'
import type { TurnCounter, TurnDeps, TurnErrorCode, TurnEvent, TurnRequest, TurnTextSink } from './turn-types.js'
import type { LoopInput } from './tool-run.js'
import { TextBuffer } from './text-buffer.js'

export type { TurnCounter, TurnDeps, TurnErrorCode, TurnEvent, TurnRequest, TurnTextSink } from './turn-types.js'

const fail = (code: TurnErrorCode, message: string, policy?: string): TurnEvent =>
  policy === undefined ? { type: 'error', code, message } : { type: 'error', code, message, policy }

const same = (e: TurnEvent): TurnEvent => e

/**
 * Runs one turn; see the module comment. Aborting `signal` ends it with an error `cancelled`.
 * One generator from the request to the runtime's events (no wrapper delegating to another):
 * every layer a streamed token passes costs it a promise and a microtask. With `onText`, text
 * deltas go there instead of out as events (see TurnTextSink). With `counter`, the turn reports its
 * start at its first read, each event on its way out, and its end exactly once (after the last
 * event, or when its reader stops); a turn never read reports nothing.
 */
export async function* runTurn(
  deps: TurnDeps,
  req: TurnRequest,
  signal?: AiCancelSignal,
  onText?: TurnTextSink,
  counter?: TurnCounter
): AsyncGenerator<TurnEvent> {
  // counted here, not by an iterator around the turn: a layer costs every event a promise
  counter?.started()
  const out =
    counter === undefined
      ? same
      : (e: TurnEvent): TurnEvent => {
          counter.event(e)
          return e
        }
  try {
    try {
      const malformed = shapeError(req)
      if (malformed !== undefined) {
        yield out(fail('bad-request', malformed))
        return
      }
      const { platform } = deps
      let agent: RegisteredAgent | undefined
      if (req.agent !== undefined) {
        // a loop, not find(): its callback is a closure made on every turn
        const agents = platform.plugins.agents()
        for (let i = 0; i < agents.length && agent === undefined; i++)
          if (agents[i]!.name === req.agent) agent = agents[i]
        if (agent === undefined) {
          yield out(fail('unknown-agent', `no loaded plugin contributes an agent named '${req.agent}'`))
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
          yield out(fail('denied', `denied by policy ${a.policy.name}: ${a.reason}`, a.policy.name))
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
          yield out(fail('bad-request', `agent '${agent.name}' runs its own turn, which takes ${what}`))
          return
        }
        // a runtime that takes a sink hands its deltas there itself: no event per token
        const sink =
          onText === undefined
            ? undefined
            : (delta: string): void | Promise<void> => {
                text.push(delta)
                return onText(delta)
              }
        // the default loop's rounds are read here, each runtime event handed to the loop by a call
        let loop: AgentLoop | undefined
        let source: AsyncIterable<AiEvent | TurnEvent>
        if (agent?.run !== undefined) source = ownRun(deps, agent, input, signal)
        else {
          const picked = pickRuntime(deps, input.request)
          if (picked === undefined) {
            yield out(fail('no-runtime', 'no AI runtime is active (check platform.ai.runtime)'))
            return
          }
          const refused = runtimeRefusal(picked.runtime, input)
          if (refused !== undefined) {
            yield out(refused)
            return
          }
          loop = new AgentLoop(deps, picked.runtime, input, picked.model, signal, sink)
          source = loop.stream()
        }
        for (;;) {
          for await (const raw of source) {
            const e = loop === undefined ? (raw as TurnEvent) : loop.take(raw as AiEvent)
            if (e === undefined) continue
            if (e.type === 'text') {
              text.push(e.delta)
              if (onText !== undefined) {
                const wait = onText(e.delta)
                if (wait !== undefined) await wait
                continue
              }
            }
            yield out(e)
            if (e.type === 'error') return
          }
          if (loop === undefined) break
          const next = loop.endRound()
          if (next === false) break
          if (next !== true) {
            yield out(next)
            return
          }
          // tool events only: no text, no error
          for await (const e of loop.runTools()) yield out(e)
          if (loop.handedOver) break
          source = loop.stream()
        }
        const full = text.text()
        if (gov !== undefined) {
          closed = true
          const answered = gov.gate.afterResponse(resource, request, full)
          const after = answered instanceof Promise ? await answered : answered
          if (!after.admitted) {
            yield out(
              fail('denied', `response denied by policy ${after.policy.name}: ${after.reason}`, after.policy.name)
            )
            return
          }
        }
        const lines = guidance.length > 0 ? carriedLines(input.systemPrompt, guidance) : guidance
        if (lines.length > 0) yield out({ type: 'feedback', injected: lines.length, lines })
        yield out(
          input.truncated
            ? { type: 'complete', text: full, preferences, userMessage: request.message, truncated: true }
            : { type: 'complete', text: full, preferences, userMessage: request.message }
        )
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
      yield out(fail('runtime', `turn failed: ${err instanceof Error ? err.message : String(err)}`))
    }
  } finally {
    counter?.ended()
  }
}

const notArray = (v: unknown): boolean => v !== undefined && !Array.isArray(v)
const notObject = (v: unknown): boolean => v !== undefined && (typeof v !== 'object' || v === null || Array.isArray(v))

/**
 * Why a request is malformed, as the bad-request message; undefined when it is not. Each field is
 * read by its name: reads keyed by names from a list were a lookup per field on every turn.
 */
function shapeError(req: TurnRequest): string | undefined {
  if (typeof req?.message !== 'string') return "a turn needs 'message' (a string)"
  if (notArray(req.history)) return "'history' must be an array"
  if (notArray(req.clientTools)) return "'clientTools' must be an array"
  if (notArray(req.continuation)) return "'continuation' must be an array"
  if (notArray(req.roles)) return "'roles' must be an array"
  if (notArray(req.images)) return "'images' must be an array"
  if (notObject(req.facts)) return "'facts' must be an object"
  if (notObject(req.clientMetadata)) return "'clientMetadata' must be an object"
  return undefined
}

/**
 * What policies read as facts: the entry point's own facts and the credentials' roles. Client
 * metadata never lands here, so no entry point can let a client claim an identity, a role or a
 * tool call (`action: call_tool` makes scope step aside).
 */
function serverMetadata(req: TurnRequest): Record<string, unknown> {
  // copied without `roles`, not copied whole and the key deleted: a `delete` turns the object
  // into a dictionary, a hash lookup for every policy that reads it
  const { roles: _roles, ...md }: Record<string, unknown> = req.facts ?? {}
  if (req.roles !== undefined && req.roles.length > 0) md.roles = [...req.roles]
  return md
}

/** Why the picked runtime cannot answer this turn, as its error event; undefined when it can. */
function runtimeRefusal(runtime: AiRuntime, input: LoopInput): TurnEvent | undefined {
  // a runtime that cannot see images must not answer as if it had
  if (input.images.length > 0 && !runtime.capabilities.includes('image-input'))
    return fail('bad-request', `runtime '${runtime.name}' does not take image input`)
  // nor may one that cannot keep to a format answer as if it had
  if (input.responseFormat !== undefined && !runtime.capabilities.includes('structured-output'))
    return fail('bad-request', `runtime '${runtime.name}' cannot answer in a response format`)
  return undefined
}
