import type { Cancellation } from '../plugins/index.js'
import type { StepCapture } from './capture.js'
import { interactionOf } from './store-input.js'
import type { Interaction, InteractionHeader, InteractionStep } from './types.js'

/** A step whose write is in flight (`writing`), acknowledged (`stored`) or refused (`failed`). */
export interface UnpublishedStep {
  step: InteractionStep
  state: 'writing' | 'stored' | 'failed'
  /** The store's answer for it: the steps of one group commit share one. */
  ack: Promise<void>
}

/** One turn in flight: its record as it grows, and what stops it. */
export interface Run {
  header: InteractionHeader
  /**
   * The steps so far, kept where nothing else holds them for a reader: for the answer of a
   * synchronous POST and for `store: false`. A stored background run's steps are read from the store.
   */
  steps: InteractionStep[] | undefined
  capture: StepCapture
  /** A flag and its listeners: an AbortSignal is built only if something in the turn asks for one. */
  controller: Cancellation
  cancellable: boolean
  /**
   * Steps handed to the store and not yet published, in seq order: each is published once it
   * and every step before it has been answered by the store.
   */
  unpublished: UnpublishedStep[]
  /** The store's answer for the last step handed to it, until that answer settles. */
  lastAck: Promise<void> | undefined
  /** Told once `unpublished` empties (a terminal write or a drop waits for it). */
  onPublished: (() => void) | undefined
  /** What `onPublished` resolves, shared by everything waiting for it. */
  allPublished: Promise<void> | undefined
  /** Set at the end: every step published, then the terminal header's write. */
  ending: Promise<void> | undefined
  /**
   * For a synchronous POST, which waits for it: resolves once the terminal state is durable (or
   * the run was dropped). A background run, which nobody awaits, has none.
   */
  finished: Promise<Interaction> | undefined
  resolve: ((i: Interaction) => void) | undefined
  /** Deleted or shut down: nothing more is written. */
  dropped: boolean
  /** The user's message, added to the conversation when the turn completes. */
  message: string
  /** Gives back the run's slot of its owner's runs in flight (once): called when its outcome is decided. */
  release: () => void
  /**
   * The turn ended handing tool calls to the client: the conversation keeps nothing of it yet,
   * the turn that answers them carries the exchange and is remembered in its place.
   */
  handedToClient: boolean
}

/**
 * The runs in flight, by interaction id. A run gives back its slot of the per-principal quota as
 * soon as its outcome is decided, before its last writes.
 */
export class RunTable {
  private readonly runs = new Map<string, Run>()

  get size(): number {
    return this.runs.size
  }

  get(id: string): Run | undefined {
    return this.runs.get(id)
  }

  all(): Run[] {
    return [...this.runs.values()]
  }

  add(run: Run): void {
    this.runs.set(run.header.id, run)
  }

  /**
   * The stored runs whose leases their node renews: every one still here, its outcome decided or
   * not. A run whose runtime has finished may still have steps and its terminal header queued
   * behind a slow store; letting its lease lapse then would have a sweep end it `node lost` while
   * this node is writing it (the renewal's own status check drops a run once it has ended).
   */
  leased(): string[] {
    const ids: string[] = []
    for (const r of this.runs.values()) if (r.header.store && !r.dropped) ids.push(r.header.id)
    return ids
  }

  /** The run is no longer in flight (once, whichever of end and drop comes first). */
  forget(run: Run): void {
    if (this.runs.delete(run.header.id)) this.uncount(run)
  }

  /** The run no longer counts against its owner's runs in flight (its release runs once). */
  uncount(run: Run): void {
    run.release()
  }
}

/** What a reader sees of a run: its record now and a copy of the steps it keeps. */
export function snapshot(run: Run): Interaction {
  return interactionOf(run.header, [...(run.steps ?? [])])
}
