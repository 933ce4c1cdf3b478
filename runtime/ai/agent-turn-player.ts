import type { Logger } from '../observability/index.js'
import type { AiService } from './ai-service.js'
import { addUsage, feedbackLines, type SessionFrames } from './agent-frames.js'
import type { AiCancelSignal, AiMessage, TokenUsage } from './runtime.js'
import type { TurnEvent, TurnRequest } from './turn-pipeline.js'

/** Where a turn's frames go: one connection, or every member of the agent's room (each with its own seq). */
export interface TurnTarget {
  send(build: (frames: SessionFrames) => string): void
  /**
   * A streamed token's frame (`SessionFrames.textDelta`): the hot path of a turn, a method of its
   * own so no closure is made per token. Absent: `send` builds it.
   */
  text?(delta: string): void
}

export interface PlayInput {
  request: TurnRequest
  /** The conversation memory key (already scoped to the caller); history is read from it, the exchange appended. */
  memoryKey: string
  /**
   * The key is this session's own and no turn has used it yet, so it holds nothing: the read is
   * skipped (no one else writes a session's keys; its id is new and random).
   */
  freshKey?: boolean
  /** Whether governance feedback frames go out (not for broadcastReply agents, whose room is not the subject). */
  feedbackFrames: boolean
}

/**
 * Plays one governed turn as wire frames: text deltas, tool frames, a `model` metadata frame with
 * the first usage, the feedback metadata just before `complete`, and exactly one terminal frame
 * (`complete` with the turn's usage, or `error`). After a completed turn the user message and the
 * answer are appended to memory before `complete` goes out, so a client's next turn sees them.
 */
export async function playTurn(
  ai: AiService,
  input: PlayInput,
  target: TurnTarget,
  signal: AiCancelSignal,
  logger: Logger
): Promise<void> {
  let ended = false
  // compare-and-set: whatever happens, one terminal frame per turn and nothing of the turn after it
  const end = (build: (f: SessionFrames) => string): void => {
    if (ended) return
    ended = true
    target.send(build)
  }
  let history: AiMessage[] = []
  try {
    if (input.freshKey !== true) history = await ai.memory.read(input.memoryKey)
  } catch (err) {
    logger.error({ err }, 'agent endpoint: reading conversation memory failed')
    end((f) => f.simple('error', 'conversation memory is unavailable'))
    return
  }
  let usage: TokenUsage | undefined
  let feedback: Extract<TurnEvent, { type: 'feedback' }> | undefined
  // each token straight from the turn to its frame: no event, no closure, no hop per token
  const text = (delta: string): void => {
    if (ended) return
    if (target.text !== undefined) target.text(delta)
    else target.send((f) => f.textDelta(delta))
  }
  for await (const e of ai.runTurn({ ...input.request, history }, signal, text)) {
    if (ended) continue
    switch (e.type) {
      case 'text':
        text(e.delta)
        break
      case 'tool-start':
        target.send((f) => f.event('tool-start', { toolName: e.call.name, arguments: e.call.arguments }))
        break
      case 'tool-result':
        target.send((f) => f.event('tool-result', { toolName: e.name, result: e.content }))
        break
      case 'tool-error':
        target.send((f) => f.event('tool-error', { toolName: e.name, error: e.message }))
        break
      case 'agent-step':
        target.send((f) =>
          f.event('agent-step', { stepName: e.name, description: e.description ?? '', data: e.data ?? null })
        )
        break
      case 'usage':
        if (usage === undefined) target.send((f) => f.metadata('model', e.usage.model))
        usage = addUsage(usage, e.usage)
        break
      case 'feedback':
        feedback = e
        break
      case 'error':
        end((f) => f.simple('error', e.message))
        break
      case 'complete': {
        try {
          await ai.memory.append(input.memoryKey, [
            // the admitted message: a transform (PII redaction) must not come back through history
            { role: 'user', content: e.userMessage },
            { role: 'assistant', content: e.text }
          ])
        } catch (err) {
          logger.error({ err }, 'agent endpoint: appending to conversation memory failed')
        }
        if (feedback !== undefined && input.feedbackFrames) {
          const fb = feedback
          target.send((f) => f.metadata('ai.governance.feedback.injected', fb.injected))
          target.send((f) => f.metadata('ai.governance.feedback.lines', feedbackLines(fb.lines)))
        }
        const data: Record<string, unknown> = { summary: e.text }
        if (usage !== undefined) data.usage = usage
        end((f) => f.event('complete', data))
        break
      }
    }
  }
  end((f) => f.simple('error', 'the turn ended without a result'))
}
