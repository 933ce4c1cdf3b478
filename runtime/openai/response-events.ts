import type { Interaction, InteractionStep } from '../interactions/index.js'
import { functionCallItem, messageId, messageItem, responseObject, type ResponseEcho } from './response-object.js'

/** One streamed event: `type` and `sequence_number` first, as the Responses API sends them. */
export type ResponseEvent = { type: string; sequence_number: number } & Record<string, unknown>

/**
 * Builds the Responses API's semantic events of one response from its interaction's steps. The
 * same steps always give the same events with the same sequence numbers, so a stream resumed
 * with `starting_after` rebuilds them from the stored steps and skips those the client has.
 */
export class ResponseEvents {
  private seq = 0
  private text = ''
  private open = false
  private ended = false
  /** The output items so far: the message's index is its place among them. */
  private items = 0
  private messageIndex = 0

  constructor(
    /** The record as first seen (status in progress): the snapshot `created` and `in_progress` carry. */
    private readonly start: Interaction,
    private readonly echo: ResponseEcho,
    private readonly emit: (e: ResponseEvent) => void
  ) {}

  get done(): boolean {
    return this.ended
  }

  begin(): void {
    // the input step stays: the snapshot's `text.format` is read from it
    const steps = this.start.steps.filter((s) => s.type === 'input')
    const blank = { ...this.start, status: 'RUNNING' as const, steps, finalText: null, usage: null }
    const snapshot = responseObject(blank, this.echo)
    this.event('response.created', { response: snapshot })
    this.event('response.in_progress', { response: snapshot })
  }

  /** A step of the turn: text streams as deltas; the tool and usage steps stay inside the platform. */
  step(s: InteractionStep): void {
    if (this.ended) return
    if (s.type === 'tool-call' && s.data.client === true && s.toolName !== null) this.functionCall(s)
    else if (s.type === 'text' && s.text !== null && s.text !== '') this.delta(s.text)
    else if (s.type === 'completion' && s.text !== null && this.text === '' && s.text !== '')
      // an agent's own run answers without text steps: its answer streams as one delta
      this.delta(s.text)
  }

  /** The terminal record: closes the message and sends `completed`, `incomplete` or `failed`. */
  finish(final: Interaction): void {
    if (this.ended) return
    this.ended = true
    const response = responseObject(final, this.echo)
    const status = response.status
    if (this.open) this.closeMessage(final.id, status === 'completed' ? 'completed' : 'incomplete')
    const type =
      status === 'completed'
        ? 'response.completed'
        : status === 'incomplete'
          ? 'response.incomplete'
          : 'response.failed'
    this.event(type, { response })
  }

  /** A call handed to the client: its item, its arguments as one delta, done (after the message, closed first). */
  private functionCall(s: InteractionStep): void {
    if (this.open) this.closeMessage(this.start.id, 'completed')
    const call = {
      id: String(s.data.id),
      name: s.toolName!,
      arguments: (s.data.arguments ?? {}) as Record<string, unknown>
    }
    const item = functionCallItem(call)
    const output_index = this.items++
    this.event('response.output_item.added', { output_index, item: functionCallItem(call, 'in_progress') })
    this.event('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: item.arguments })
    this.event('response.function_call_arguments.done', {
      item_id: item.id,
      output_index,
      name: item.name,
      arguments: item.arguments
    })
    this.event('response.output_item.done', { output_index, item })
  }

  private delta(text: string): void {
    const id = messageId(this.start.id)
    if (!this.open) {
      this.open = true
      this.messageIndex = this.items++
      this.event('response.output_item.added', {
        output_index: this.messageIndex,
        item: messageItem(this.start.id, '', 'in_progress')
      })
      this.event('response.content_part.added', {
        item_id: id,
        output_index: this.messageIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] }
      })
    }
    this.text += text
    this.event('response.output_text.delta', {
      item_id: id,
      output_index: this.messageIndex,
      content_index: 0,
      delta: text,
      logprobs: []
    })
  }

  private closeMessage(responseId: string, status: 'completed' | 'incomplete'): void {
    this.open = false
    const id = messageId(responseId)
    const output_index = this.messageIndex
    const part = { type: 'output_text', text: this.text, annotations: [], logprobs: [] }
    this.event('response.output_text.done', {
      item_id: id,
      output_index,
      content_index: 0,
      text: this.text,
      logprobs: []
    })
    this.event('response.content_part.done', { item_id: id, output_index, content_index: 0, part })
    this.event('response.output_item.done', { output_index, item: messageItem(responseId, this.text, status) })
  }

  private event(type: string, fields: Record<string, unknown>): void {
    this.emit({ type, sequence_number: this.seq++, ...fields })
  }
}
