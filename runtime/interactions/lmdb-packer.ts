import type { Database } from 'lmdb'
import type { StepRecord } from './lmdb-step-group.js'
import type { InteractionStep } from './types.js'

type StepKey = [string, number]

const LAST_SEQ = Number.MAX_SAFE_INTEGER
const SETTLED = Promise.resolve()
// steps packed per transaction: about a millisecond of the main thread, while the writer waits
const STEPS_PER_TRANSACTION = 1000

export interface PackerDbs {
  /** Any database of the environment: its `transaction` orders the packing with the other writes. */
  readonly txn: Database<unknown, string>
  readonly steps: Database<StepRecord, StepKey>
  readonly packed: Database<InteractionStep[], string>
  /** Ended runs whose steps are not packed yet. */
  readonly unpacked: Database<true, string>
  /** The seq of each run's terminal step: the size of what packing it reads. */
  readonly ends: Database<number, string>
}

/**
 * Moves an ended run's step records into its one packed record, after the transaction that stored
 * its terminal step committed, a bounded number of steps per transaction. Packing reads, removes
 * and encodes again every step of the run (about a millisecond for 200) in a transaction callback,
 * which runs on the main thread while the LMDB writer waits: inside the terminal step's own
 * transaction, runs ending together stalled every live stream for the sum of theirs. Until packed,
 * a run reads from its step records as before; a run ended but not packed when the process stops
 * stays marked in `unpacked` and is packed after the next start.
 */
export class EndedPacker {
  private readonly queue: string[] = []
  private running: Promise<void> | undefined
  private stopped = false

  constructor(private readonly dbs: PackerDbs) {}

  /** Inside the transaction that stores the run's terminal step. */
  mark(id: string): void {
    void this.dbs.unpacked.put(id, true)
  }

  /** Inside the transaction that deletes the run: nothing is left to pack. */
  unmark(id: string): void {
    void this.dbs.unpacked.remove(id)
  }

  /** Once that transaction committed. */
  later(id: string): void {
    this.queue.push(id)
    this.kick()
  }

  /** At start: the runs ended but not packed (by a previous process, or marked at start). */
  resume(): void {
    for (const id of this.dbs.unpacked.getKeys()) this.queue.push(id)
    this.kick()
  }

  /** Resolves once every run queued so far is packed (or packing stopped). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running
  }

  /** Finishes the transaction in flight; what is still queued stays marked for the next start. */
  async stop(): Promise<void> {
    this.stopped = true
    await (this.running ?? SETTLED)
  }

  private kick(): void {
    if (this.running === undefined && !this.stopped && this.queue.length > 0) this.running = this.loop()
  }

  private async loop(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const ids: string[] = []
        let steps = 0
        while (this.queue.length > 0 && (ids.length === 0 || steps < STEPS_PER_TRANSACTION)) {
          const id = this.queue.shift()!
          ids.push(id)
          steps += (this.dbs.ends.get(id) ?? 0) + 1
        }
        await this.dbs.txn.transaction(() => {
          for (const id of ids) this.pack(id)
        })
      }
    } catch {
      // the disk refused: the runs stay marked and read from their step records; the next start retries
      this.queue.length = 0
    } finally {
      this.running = undefined
    }
  }

  /** Inside a transaction. A run deleted meanwhile is no longer marked. */
  private pack(id: string): void {
    if (this.dbs.unpacked.get(id) === undefined) return
    const steps: InteractionStep[] = []
    const range = this.dbs.steps.getRange({ start: [id, -1], end: [id, LAST_SEQ], inclusiveEnd: true })
    for (const { key, value } of range) {
      if (Array.isArray(value)) for (const x of value) steps.push(x)
      else steps.push(value)
      void this.dbs.steps.remove(key)
    }
    void this.dbs.packed.put(id, steps)
    void this.dbs.unpacked.remove(id)
  }
}
