/**
 * One message on its way to many resources, serialised once. WebSocket and SSE carry `text`;
 * long-polling answers are JSON arrays, so they carry `item`: the frame itself when it is JSON,
 * otherwise the text as a JSON string. `item` is computed at most once, and only if a
 * long-polling member needs it.
 */
export class Frame {
  private _item: string | undefined

  private constructor(
    readonly text: string,
    isJson: boolean
  ) {
    if (isJson) this._item = text
  }

  /** A frame we serialised ourselves. */
  static json(text: string): Frame {
    return new Frame(text, true)
  }

  /** A frame of caller-supplied text, which may or may not be JSON. */
  static text(text: string): Frame {
    return new Frame(text, false)
  }

  static of(value: unknown): Frame {
    return typeof value === 'string' ? Frame.text(value) : Frame.json(JSON.stringify(value))
  }

  get item(): string {
    if (this._item === undefined) {
      let ok = true
      try {
        JSON.parse(this.text)
      } catch {
        ok = false
      }
      this._item = ok ? this.text : JSON.stringify(this.text)
    }
    return this._item
  }
}

/** Sent to SSE and long-polling resources that the server ends (WebSockets get a close code). */
export function disconnectedFrame(reason: string): Frame {
  return Frame.json(JSON.stringify({ type: 'disconnected', reason }))
}
