import { randomUUID } from 'node:crypto'
import { RingBuffer } from '../store/index.js'
import type { JsonObject } from './wire.js'

/** How many of its newest events a session's GET stream keeps for a `Last-Event-ID` replay. */
export const REPLAY_EVENTS = 100

export interface StreamEvent {
  id: string
  data: string
}

/**
 * The events of one session's GET notification stream, for resuming it (Streamable HTTP
 * resumability): each gets an id `<stream>_<seq>`; a client that reconnects with `Last-Event-ID`
 * gets the ones after it that are still kept. The stream part is random per history, so an id from
 * another stream (or from before a restart, which starts a new history) replays nothing.
 */
export class StreamHistory {
  private readonly streamId = randomUUID().slice(0, 8)
  private readonly events = new RingBuffer<StreamEvent>(REPLAY_EVENTS)
  private next = 0

  /** Records one message and returns it as the event to send. */
  record(msg: JsonObject): StreamEvent {
    const e = { id: `${this.streamId}_${this.next++}`, data: JSON.stringify(msg) }
    this.events.push(e)
    return e
  }

  /** The kept events after `lastEventId`, oldest first; none when the id is not one of this stream's. */
  after(lastEventId: string): StreamEvent[] {
    const sep = lastEventId.lastIndexOf('_')
    if (sep < 0 || lastEventId.slice(0, sep) !== this.streamId) return []
    const seq = Number(lastEventId.slice(sep + 1))
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= this.next) return []
    return this.events.last(this.next - 1 - seq)
  }
}
