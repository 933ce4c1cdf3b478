import { asBinary, type Database } from 'lmdb'
import type { InteractionStep } from './types.js'

type StepKey = [string, number]

const LAST_SEQ = Number.MAX_SAFE_INTEGER
const SETTLED = Promise.resolve()
// steps packed per transaction: about 2 ms of the main thread (two steps a record), while the
// writer waits; twice as many saved no CPU that measured beyond noise
const STEPS_PER_TRANSACTION = 1000
// msgpack's bin 32 header: a packed record decodes as one byte array
const BIN32 = 0xc6
const HEAD = 5
// each packed record's bytes follow their length
const FRAME = 4

/** What decodes the step database's values: its msgpack encoder, with its shared structures. */
export interface RecordDecoder {
  decode(bytes: Uint8Array, range: { start: number; end: number }): unknown
}

/**
 * The steps a record holds, in seq order: a step record (one step, or the steps of one group
 * commit), or an ended run's packed record: its step records as stored, each decoded on its own
 * through the step database's decoder, as it was encoded (see `EndedPacker`); or, as stores
 * written before packed a run, its steps decoded.
 */
export function stepsOfRecord(
  value: InteractionStep | InteractionStep[] | Uint8Array,
  decoder: RecordDecoder
): InteractionStep[] {
  if (Array.isArray(value)) return value
  if (!(value instanceof Uint8Array)) return [value]
  const out: InteractionStep[] = []
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength)
  for (let at = 0; at < value.length;) {
    const end = at + FRAME + view.getUint32(at, true)
    const record = decoder.decode(value, { start: at + FRAME, end }) as InteractionStep | InteractionStep[]
    if (Array.isArray(record)) for (const x of record) out.push(x)
    else out.push(record)
    at = end
  }
  return out
}

export interface PackerDbs {
  /** Any database of the environment: its `transaction` orders the packing with the other writes. */
  readonly txn: Database<unknown, string>
  /** The step database's records as stored: packing moves their bytes, decoding none. */
  readonly rawSteps: Database<Buffer, StepKey>
  readonly packed: Database<InteractionStep[] | Uint8Array, string>
  /** Ended runs whose steps are not packed yet. */
  readonly unpacked: Database<true, string>
  /** The seq of each run's terminal step: the size of what packing it reads. */
  readonly ends: Database<number, string>
}

/**
 * Moves an ended run's step records into its one packed record, after the transaction that stored
 * its terminal step committed, a bounded number of steps per transaction. The packed record holds
 * the records' stored bytes one after another, each after its length: nothing is decoded or
 * encoded again (that was two thirds of packing's time), and each still decodes on its own through
 * the step database's shared structures, which only grow. Joined into one array and decoded
 * once, records whose structures are not shared misread; a decode per record makes a read of 200
 * steps about 40 % slower than one array was. Packing runs in a transaction callback, on the main
 * thread while the LMDB writer waits: inside the terminal step's own transaction, runs ending
 * together stalled every live stream for the sum of theirs. Until packed, a run reads from its
 * step records as before; a run ended but not packed when the process stops stays marked in
 * `unpacked` and is packed after the next start.
 */
export class EndedPacker {
  private readonly queue: string[] = []
  private running: Promise<void> | undefined
  private stopped = false

  constructor(
    private readonly dbs: PackerDbs,
    private readonly onError: (err: Error) => void = () => {}
  ) {}

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
        // a child transaction: lmdb-js commits what an outer transaction's callback wrote before it
        // threw, and steps removed without their packed record would be lost
        await this.dbs.txn.childTransaction(() => {
          for (const id of ids) this.pack(id)
        })
      }
    } catch (err) {
      // the disk refused: the runs stay marked and read from their step records; the next start retries
      this.queue.length = 0
      this.onError(err as Error)
    } finally {
      this.running = undefined
    }
  }

  /** Inside a transaction. A run deleted meanwhile is no longer marked. */
  private pack(id: string): void {
    if (this.dbs.unpacked.get(id) === undefined) return
    const records: Uint8Array[] = []
    const keys: StepKey[] = []
    let bytes = 0
    const range = this.dbs.rawSteps.getRange({ start: [id, -1], end: [id, LAST_SEQ], inclusiveEnd: true })
    for (const { key, value } of range) {
      records.push(value)
      keys.push(key)
      bytes += FRAME + value.length
    }
    // removed once read: a delete under a cursor of the same transaction could move it
    for (const key of keys) void this.dbs.rawSteps.remove(key)
    void this.dbs.packed.put(id, asBinary(framed(records, bytes)) as unknown as Uint8Array)
    void this.dbs.unpacked.remove(id)
  }
}

/** The records one after another, each after its length, as one msgpack byte array. */
function framed(records: Uint8Array[], bytes: number): Buffer {
  const out = Buffer.allocUnsafe(HEAD + bytes)
  // Buffer's writeUInt32 checks its arguments on every call: a third of this function's time, profiled
  const view = new DataView(out.buffer, out.byteOffset, out.length)
  out[0] = BIN32
  view.setUint32(1, bytes)
  let at = HEAD
  for (const r of records) {
    view.setUint32(at, r.length, true)
    out.set(r, at + FRAME)
    at += FRAME + r.length
  }
  return out
}
