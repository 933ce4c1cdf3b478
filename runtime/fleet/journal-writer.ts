/**
 * Gives journal events their ids and hands them to the store in one append per event-loop turn,
 * or per `flushMs` window, so a dispatch never waits on the store and a burst of parallel calls is
 * one write. An append on LMDB is a commit, about 300 µs of CPU with its sync on the 2-core
 * machine, paid per append, not per event: at a loop turn a busy fleet paid it several times a
 * millisecond. A burst that does not yield to the event loop (thousands of awaited dispatches) is
 * written every `BATCH_MAX` events rather than held whole until the turn or window ends;
 * `settled()` writes what waits at once.
 */
import { randomBytes } from 'node:crypto'
import { isoNow } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import type { JournalEventType, JournalRecord, JournalStore } from './fleet-types.js'

/** Events per append at most. */
export const BATCH_MAX = 256

export class JournalWriter {
  private pending: JournalRecord[] = []
  /** An Immediate is queued to write at the end of this event-loop turn (flushMs 0). */
  private scheduled = false
  /** The window's timer while events wait for it (flushMs > 0). */
  private timer: NodeJS.Timeout | undefined
  private writing: Promise<void> = Promise.resolve()
  // ids are this writer's random prefix and a counter: unique across restarts without a UUID per event
  private readonly prefix = `evt-${randomBytes(9).toString('base64url')}-`
  private count = 0

  constructor(
    private readonly store: JournalStore,
    private readonly logger: Logger,
    /** How long events wait for more before they are appended together (0: at the end of the event-loop turn). */
    private readonly flushMs = 0
  ) {}

  /** Queues one event; returns its id, for the events that hang under it. */
  emit(
    coordinationId: string,
    parentEventId: string | null,
    type: JournalEventType,
    fields: Record<string, unknown>
  ): string {
    const eventId = this.prefix + (++this.count).toString(36)
    // the caller's fields first, then the record's own (as a spread would order them): a spread of
    // the many field shapes went to the slow path and was the most of an emit's CPU in a profile
    const e = Object.assign({}, fields) as JournalRecord
    e.eventId = eventId
    e.parentEventId = parentEventId
    e.type = type
    e.coordinationId = coordinationId
    e.timestamp = isoNow()
    this.pending.push(e)
    if (this.pending.length >= BATCH_MAX) this.flush()
    else if (this.flushMs > 0) this.timer ??= setTimeout(this.flushTurn, this.flushMs)
    else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flushTurn)
    }
    return eventId
  }

  private readonly flushTurn = (): void => {
    this.scheduled = false
    this.flush()
  }

  private flush(): void {
    // written before its window ended (a full batch, a reader): the window starts again with the next event
    clearTimeout(this.timer)
    this.timer = undefined
    const batch = this.pending
    if (batch.length === 0) return
    this.pending = []
    // appends stay in order: the next batch waits for this one
    this.writing = this.writing.then(() =>
      this.store.append(batch).catch((err: unknown) => {
        this.logger.error({ err, events: batch.length }, 'fleet journal: an append failed; its events are lost')
      })
    )
  }

  /** Resolves once every event emitted so far is in the store (a reader sees its own dispatches). */
  async settled(): Promise<void> {
    if (this.pending.length > 0) this.flush()
    await this.writing
  }
}
