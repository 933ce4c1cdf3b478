/**
 * How a run's steps reach its live viewers: each is published once the store acknowledged it and
 * every step before it, in seq order, from one queue per run (no promise chain per step).
 */
import type { StepFeed } from './feed.js'
import type { Run, UnpublishedStep } from './run-table.js'

// what a run with nothing left to publish answers
const SETTLED = Promise.resolve()

/**
 * Publishes, in seq order, the acknowledged steps no earlier step is still waiting before. The
 * steps one commit acknowledged are published in one pass, so a stream sends them together.
 */
export function publishReady(run: Run, feed: StepFeed): void {
  const q = run.unpublished
  let n = 0
  for (; n < q.length && q[n]!.state !== 'writing'; n++)
    if (q[n]!.state === 'stored') feed.publishStep(run.header.id, q[n]!.step)
  if (n === 0) return
  // in place: splice would allocate an array of the removed entries each pass
  q.copyWithin(0, n)
  q.length -= n
  if (q.length === 0 && run.onPublished !== undefined) {
    const told = run.onPublished
    run.onPublished = undefined
    run.allPublished = undefined
    told()
  }
}

/**
 * The store answered `ack`: every step it holds is marked (the steps of a group commit share one
 * answer, so a run reacts once per group, not once per step), then what is ready is published.
 */
export function answered(run: Run, ack: Promise<void>, state: UnpublishedStep['state'], feed: StepFeed): void {
  if (run.lastAck === ack) run.lastAck = undefined
  for (const entry of run.unpublished) if (entry.ack === ack) entry.state = state
  publishReady(run, feed)
}

// A turn is read no further while this many of its steps await the store: a model faster than
// the disk is paced by it, so a live viewer waits behind a few steps, not a backlog. With two, a
// commit carried one step per turn. More let the store group what a turn appends while a commit is
// in flight: one record, one leaf page and one corked write per viewer for several steps, and fewer
// waits on `published`. At 200 turns as fast as the demo runtime, five alternations of one build:
// six cut CPU per step from 12.3-16.4 to 10.8-13.5 µs (medians of five rounds) with the rounds'
// p99 at 18-36 ms (three: 13-68 ms); eight cut no more and let p99 reach 63 ms.
export const UNACKNOWLEDGED_STEPS = 6

/** Whether the run's turn waits for `published` before its next event. */
export function behindStore(run: Run): boolean {
  return run.unpublished.length >= UNACKNOWLEDGED_STEPS
}

/**
 * Resolves once every step handed to the store so far is published (or was refused). Every waiter
 * (the turn behind the store, the run's end) shares one promise: a chain of closures took a call
 * the compiled `publishReady` had never seen once two waited.
 */
export function published(run: Run): Promise<void> {
  if (run.unpublished.length === 0) return SETTLED
  return (run.allPublished ??= new Promise((resolve) => {
    run.onPublished = resolve
  }))
}

/**
 * The run's text sink: each delta of its turn captured as it comes (no event around it, no
 * generator layer on its way), the turn held while the run is behind the store.
 */
export function pacedText(run: Run): (delta: string) => void | Promise<void> {
  return (delta) => {
    run.capture.text(delta)
    return behindStore(run) ? published(run) : undefined
  }
}
