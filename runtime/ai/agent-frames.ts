import type { TokenUsage } from './runtime.js'

/** Longest governance feedback line sent in an `ai.governance.feedback.lines` frame. */
export const FEEDBACK_LINE_MAX = 512

const DELTA_HEAD = '{"event":"text-delta","data":{"text":'
const DELTA_HEAD_BYTES = Buffer.from(DELTA_HEAD, 'latin1')
const SSE_DELTA_HEAD_BYTES = Buffer.from('data: ' + DELTA_HEAD, 'latin1')
/** The most bytes a JSON string takes per UTF-16 unit of its text: `\u001f`, or a lone surrogate's `\ud800`. */
const JSON_BYTES_PER_UNIT = 6

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
  /** `deltaMid` as UTF-8, for the frames written as bytes. */
  private readonly deltaMidBytes: Buffer

  constructor(readonly sessionId: string) {
    this.tail = ',"sessionId":' + JSON.stringify(sessionId) + ',"seq":'
    this.deltaMid = '}' + this.tail
    this.deltaMidBytes = Buffer.from(this.deltaMid)
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

  /** The bytes `writeTextDelta(…, text, …)` may take at most. */
  textDeltaRoom(text: string): number {
    // and 24 for the text's quotes, the seq's digits (16 at most), the brace and SSE's blank line
    return SSE_DELTA_HEAD_BYTES.length + this.deltaMidBytes.length + JSON_BYTES_PER_UNIT * text.length + 24
  }

  /**
   * `textDelta(text)` as UTF-8 bytes written into `buf` from `at` (room for `textDeltaRoom(text)`
   * there), or with `sse` as one server-sent event (`data: <frame>` and a blank line: JSON escapes
   * every newline); returns where it ends. The frame of every streamed token, built from the
   * session's constant bytes with no string to join and none for the socket to encode.
   */
  writeTextDelta(buf: Buffer, at: number, text: string, sse: boolean): number {
    const head = sse ? SSE_DELTA_HEAD_BYTES : DELTA_HEAD_BYTES
    buf.set(head, at)
    let p = writeJsonString(buf, at + head.length, text)
    buf.set(this.deltaMidBytes, p)
    p = writeUint(buf, p + this.deltaMidBytes.length, ++this.seq)
    buf[p++] = 0x7d // }
    if (sse) {
      buf[p++] = 0x0a
      buf[p++] = 0x0a
    }
    return p
  }

  /** A request refused before any turn started (bad shape, busy, unknown agent): not a turn's terminal frame. */
  refusal(code: string, message: string): string {
    return this.event('error', { message, code, recoverable: true })
  }
}

/**
 * `JSON.stringify(text)` as UTF-8 into `buf` from `at`; returns where it ends. Text of printable
 * ASCII that needs no escape (most tokens) is copied a byte per character; anything else is
 * written from JSON.stringify's own text.
 */
function writeJsonString(buf: Buffer, at: number, text: string): number {
  let p = at
  buf[p++] = 0x22 // "
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7f) return at + buf.write(JSON.stringify(text), at)
    buf[p++] = c
  }
  buf[p++] = 0x22
  return p
}

/** The decimal digits of a whole number `n` >= 0 into `buf` from `at`; returns where they end. */
function writeUint(buf: Buffer, at: number, n: number): number {
  let end = at
  for (let m = n; m >= 10; m = Math.floor(m / 10)) end++
  for (let i = end; i >= at; i--) {
    buf[i] = 0x30 + (n % 10)
    n = Math.floor(n / 10)
  }
  return end + 1
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
