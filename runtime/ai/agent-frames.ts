import type { TokenUsage } from './runtime.js'

/** Longest governance feedback line sent in an `ai.governance.feedback.lines` frame. */
export const FEEDBACK_LINE_MAX = 512

const DELTA_HEAD = '{"event":"text-delta","data":{"text":'
const SSE_DELTA_HEAD = 'data: ' + DELTA_HEAD

/**
 * The server frames of one agent session, each stamped with the session id and the session's
 * next `seq`. Three families share a connection: simple frames `{type, data?}`, metadata frames
 * `{type: 'metadata', key, value}` and event frames `{event, data}`.
 */
export class SessionFrames {
  private seq = 0
  /** `,"sessionId":"…","seq":` built once: a frame per streamed token is the hot path. */
  private readonly tail: string
  /** `},"sessionId":"…","seq":`: what follows a text delta's text. */
  private readonly deltaMid: string

  constructor(readonly sessionId: string) {
    this.tail = ',"sessionId":' + JSON.stringify(sessionId) + ',"seq":'
    this.deltaMid = '}' + this.tail
  }

  simple(type: 'complete' | 'error' | 'progress', data?: string): string {
    const body = data === undefined ? '' : ',"data":' + JSON.stringify(data)
    return '{"type":"' + type + '"' + body + this.tail + ++this.seq + '}'
  }

  metadata(key: string, value: unknown): string {
    return (
      '{"type":"metadata","key":' +
      JSON.stringify(key) +
      ',"value":' +
      (JSON.stringify(value) ?? 'null') +
      this.tail +
      ++this.seq +
      '}'
    )
  }

  event(event: string, data: Record<string, unknown>): string {
    return '{"event":' + JSON.stringify(event) + ',"data":' + JSON.stringify(data) + this.tail + ++this.seq + '}'
  }

  /**
   * `event('text-delta', { text })`, byte for byte: the frame of every streamed token, built
   * without an object to stringify (a string's JSON is the same inside an object as alone).
   */
  textDelta(text: string): string {
    return DELTA_HEAD + JSON.stringify(text) + this.deltaMid + ++this.seq + '}'
  }

  /**
   * `textDelta(text)` as one server-sent event (`data: <frame>` and a blank line): the frame is
   * one line, since JSON escapes every newline. Built from the session's constant parts.
   */
  sseTextDelta(text: string): string {
    return SSE_DELTA_HEAD + JSON.stringify(text) + this.deltaMid + ++this.seq + '}\n\n'
  }

  /** A request refused before any turn started (bad shape, busy, unknown agent): not a turn's terminal frame. */
  refusal(code: string, message: string): string {
    return this.event('error', { message, code, recoverable: true })
  }
}

/** Adds one round's usage to the turn's total (a turn with tool calls has several rounds). */
export function addUsage(total: TokenUsage | undefined, u: TokenUsage): TokenUsage {
  if (total === undefined) return { ...u }
  return {
    input: total.input + u.input,
    output: total.output + u.output,
    cachedInput: total.cachedInput + u.cachedInput,
    total: total.total + u.total,
    model: u.model
  }
}

/** Feedback lines as the wire carries them: each at most FEEDBACK_LINE_MAX characters. */
export function feedbackLines(lines: string[]): string[] {
  return lines.map((l) => (l.length > FEEDBACK_LINE_MAX ? l.slice(0, FEEDBACK_LINE_MAX) : l))
}
