import type { SseStream } from '../http/index.js'
import { Resource, type Broadcaster } from './broadcaster.js'
import { disconnectedFrame, type Frame } from './frame.js'
import type { Reason } from './types.js'

/** A Server-Sent Events client: every frame is one `data:` event. */
export class SseResource extends Resource {
  constructor(
    uuid: string,
    broadcaster: Broadcaster,
    readonly stream: SseStream
  ) {
    super(uuid, 'SSE', broadcaster)
  }

  deliver(frame: Frame): void {
    if (!this.closed) this.stream.send({ data: frame.text })
  }

  end(reason: Reason): void {
    if (this.closed || this.stream.closed) return
    this.reason = reason
    this.stream.send({ data: disconnectedFrame(reason).text })
    this.stream.close()
  }

  get isSuspended(): boolean {
    return true
  }
}
