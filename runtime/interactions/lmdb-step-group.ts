// the module's binding, not the global: the global `performance` is a getter that runs on every read
import { performance } from 'node:perf_hooks'
import type { Database } from 'lmdb'
import type { InteractionStep } from './types.js'

type StepKey = [string, number]
/** A step record: one step, or the steps of one run a group commit wrote together (see `flush`). */
export type StepRecord = InteractionStep | InteractionStep[]

/**
 * Group commit of the steps appended on the store's hot path. lmdb-js makes one transaction of
 * each event turn's writes, and a streaming turn appends a step per event turn: with many runs in
 * flight, a transaction per turn each dirtied a page per run for one step. Steps wait here while
 * one group's commit is in flight, and go to the writer together once it lands: one transaction
 * (and one written page per run) for every step made meanwhile. A step is acknowledged only by the
 * commit of its own group, so acknowledgement still means durable. Whatever writes other than these
 * puts calls `flush()` first, so it is queued behind every step appended before it.
 * The steps of one run in a group are one record, keyed by the last seq it holds: a put, a key
 * and a B-tree entry for them all, and fewer records for the ended-run packer to read and remove.
 * With `windowMs`, a group also waits until that long after the previous one was issued: a commit
 * (its sync about 300 µs of CPU here) and each run's put, page and viewers' socket writes then
 * serve the steps of several event turns; a step made after a quiet spell goes at once.
 */
export class StepGroupCommit {
  /** Per run, in append order (a run's steps in seq order): each run's steps become one record. */
  private held = new Map<string, InteractionStep[]>()
  private ack: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined
  /** The commit of the last group issued, until it lands. */
  private inFlight: Promise<unknown> | undefined
  /**
   * A flush is queued for the check phase of this event-loop turn: the steps made by the turns'
   * own Immediates queued before it (a streaming run makes one per turn) join the group, in the
   * record of their run, rather than each taking a record of its own.
   */
  private queued = false
  private readonly queuedFlush = (): void => {
    this.queued = false
    this.window = undefined
    this.flush()
  }
  /** When the last group was issued (performance.now()), and the timer of a flush waiting for the window. */
  private issuedAt = -Infinity
  private window: NodeJS.Timeout | undefined

  constructor(
    private readonly steps: Database<StepRecord, StepKey>,
    private readonly windowMs = 0
  ) {}

  /** Appends a step of run `id`; resolves once a commit holding it is durable. */
  put(id: string, step: InteractionStep): Promise<void> {
    const run = this.held.get(id)
    if (run === undefined) this.held.set(id, [step])
    else run.push(step)
    if (this.inFlight === undefined) this.queue()
    if (this.ack === undefined) {
      let resolve!: () => void
      let reject!: (e: unknown) => void
      const promise = new Promise<void>((res, rej) => {
        resolve = res
        reject = rej
      })
      this.ack = { promise, resolve, reject }
    }
    return this.ack.promise
  }

  /** Hands the held steps to the writer now: a write issued next is queued behind them. */
  flush(): void {
    if (this.held.size === 0) return
    const held = this.held
    const ack = this.ack!
    this.held = new Map()
    this.ack = undefined
    this.issuedAt = performance.now()
    // issued before its window (another write flushed): the flush waiting for it has nothing to do
    if (this.window !== undefined) {
      clearTimeout(this.window)
      this.window = undefined
      this.queued = false
    }
    // issued in one go: one event turn's writes, one transaction and one promise for them all
    const commits = new Set<Promise<unknown>>()
    try {
      for (const [id, steps] of held)
        commits.add(this.issue([id, steps[steps.length - 1]!.seq], steps.length === 1 ? steps[0]! : steps))
    } catch (e) {
      commits.add(Promise.reject(e as Error))
    }
    const all = commits.size === 1 ? [...commits][0]! : Promise.all(commits)
    all.then(() => ack.resolve(), ack.reject)
  }

  private queue(): void {
    if (this.queued) return
    this.queued = true
    const wait = this.windowMs - (performance.now() - this.issuedAt)
    if (wait > 0) this.window = setTimeout(this.queuedFlush, wait)
    else setImmediate(this.queuedFlush)
  }

  private issue(key: StepKey, record: StepRecord): Promise<unknown> {
    const commit = this.steps.put(key, record) as Promise<unknown>
    // the same promise: the put joined the batch of the group in flight
    if (commit === this.inFlight) return commit
    this.inFlight = commit
    const landed = (): void => {
      if (this.inFlight !== commit) return
      this.inFlight = undefined
      if (this.held.size > 0) this.queue()
    }
    commit.then(landed, landed)
    return commit
  }
}
