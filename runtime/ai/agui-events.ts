/**
 * One AG-UI run as events: the governed turn's events become RUN_STARTED, TEXT_MESSAGE_START /
 * CONTENT / END, TOOL_CALL_START / ARGS / END / RESULT, STEP_STARTED / FINISHED, STATE_SNAPSHOT,
 * then RUN_FINISHED or RUN_ERROR, in the order the protocol's client checks (every message, tool
 * call and step closed before the run finishes, nothing after its end).
 */
import { randomUUID } from 'node:crypto'
import type { TokenUsage } from './runtime.js'
import type { TurnEvent } from './turn-pipeline.js'

export type AguiEvent = { type: string } & Record<string, unknown>

export class AguiRun {
  /** The assistant message of the current model round; its tool calls point at it. */
  private messageId: string | undefined
  private textOpen = false
  /** Tool results were sent since the model last spoke. */
  private answered = false
  /** The step an agent's run() reported last: open until the next one or the end of the run. */
  private step: string | undefined
  private ended = false
  private readonly usage = new Map<string, TokenUsage>()

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
    private readonly state: unknown,
    private readonly emit: (e: AguiEvent) => void
  ) {}

  get finished(): boolean {
    return this.ended
  }

  start(): void {
    this.emit({ type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId })
  }

  /** Maps one turn event; after `complete` or `error` the run is over and further events are ignored. */
  event(e: TurnEvent): void {
    if (this.ended) return
    switch (e.type) {
      case 'text':
        if (e.delta === '') return
        this.nextRound()
        if (!this.textOpen) {
          this.textOpen = true
          this.emit({ type: 'TEXT_MESSAGE_START', messageId: this.currentMessage(), role: 'assistant' })
        }
        this.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: this.messageId, delta: e.delta })
        return
      case 'tool-start': {
        const parentMessageId = this.currentMessage()
        this.closeText()
        const toolCallId = e.call.id
        this.emit({ type: 'TOOL_CALL_START', toolCallId, toolCallName: e.call.name, parentMessageId })
        this.emit({ type: 'TOOL_CALL_ARGS', toolCallId, delta: JSON.stringify(e.call.arguments) })
        this.emit({ type: 'TOOL_CALL_END', toolCallId })
        return
      }
      case 'tool-result':
      case 'tool-error':
        this.emit({
          type: 'TOOL_CALL_RESULT',
          messageId: randomUUID(),
          toolCallId: e.id,
          role: 'tool',
          // the model saw the same text for a failed tool, so the client's history matches it
          content: e.type === 'tool-result' ? e.content : `error: ${e.message}`
        })
        // the model answers the results in a new assistant message; the round's other calls
        // (a frontend tool's among them) still belong to this one
        this.answered = true
        return
      case 'usage':
        this.nextRound()
        this.addUsage(e.usage)
        return
      case 'agent-step': {
        // a turn reports where a step begins; AG-UI also wants where it ends: at the next one
        this.closeStep()
        this.step = e.name
        const metadata = {
          ...(e.description !== undefined && e.description !== '' ? { description: e.description } : {}),
          ...(e.data !== undefined && e.data !== null ? { data: e.data } : {})
        }
        this.emit({
          type: 'STEP_STARTED',
          stepName: e.name,
          ...(Object.keys(metadata).length > 0 ? { metadata } : {})
        })
        return
      }
      case 'feedback':
        this.emit({ type: 'CUSTOM', name: 'ai.governance.feedback', value: { injected: e.injected, lines: e.lines } })
        return
      case 'complete':
        this.closeText()
        this.closeStep()
        if (e.preferences.length > 0)
          this.emit({ type: 'CUSTOM', name: 'ai.governance.preferences', value: e.preferences })
        this.emit({ type: 'STATE_SNAPSHOT', snapshot: this.state ?? {} })
        this.end({ type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId, result: { text: e.text } })
        return
      case 'error':
        this.closeText()
        // the message names a denying policy; the protocol's event has no field of its own for it
        this.end({ type: 'RUN_ERROR', message: e.message, code: e.code })
        return
    }
  }

  /** Ends a run whose turn stopped without a terminal event (not expected; the client must still see an end). */
  fail(message: string): void {
    if (this.ended) return
    this.closeText()
    this.end({ type: 'RUN_ERROR', message, code: 'runtime' })
  }

  /** Text or usage after tool results comes from the model's next round: a new assistant message. */
  private nextRound(): void {
    if (!this.answered) return
    this.answered = false
    this.messageId = undefined
  }

  private currentMessage(): string {
    return (this.messageId ??= randomUUID())
  }

  private closeText(): void {
    if (!this.textOpen) return
    this.textOpen = false
    this.emit({ type: 'TEXT_MESSAGE_END', messageId: this.messageId })
  }

  private closeStep(): void {
    if (this.step === undefined) return
    this.emit({ type: 'STEP_FINISHED', stepName: this.step })
    this.step = undefined
  }

  private end(e: AguiEvent): void {
    this.closeStep()
    this.ended = true
    const usage = [...this.usage.values()].map((u) => ({
      model: u.model,
      inputTokens: u.input,
      outputTokens: u.output,
      totalTokens: u.total,
      cachedInputTokens: u.cachedInput
    }))
    this.emit(usage.length > 0 ? { ...e, usage } : e)
  }

  /** One entry per model, summed over the turn's model calls. */
  private addUsage(u: TokenUsage): void {
    const had = this.usage.get(u.model)
    this.usage.set(
      u.model,
      had === undefined
        ? { ...u }
        : {
            model: u.model,
            input: had.input + u.input,
            output: had.output + u.output,
            cachedInput: had.cachedInput + u.cachedInput,
            total: had.total + u.total
          }
    )
  }
}
