import type { Backplane } from '../contracts/index.js'
import { INTERACTION_ID } from './store-input.js'
import type { InteractionFeed, InteractionHeader, InteractionStep } from './types.js'

type Listener = Parameters<InteractionFeed['subscribe']>[1]

/** What one interaction's backplane topic carries: a step (`s`) or the final header (`t`). */
type Message = { s: InteractionStep } | { t: InteractionHeader }

/** The backplane topic of one interaction's live steps. */
export const stepTopic = (id: string): string => `interactions/steps/${id}`

/**
 * The feed of live steps: the run publishes, streams subscribe. It keeps nothing (replay comes
 * from the store), so a subscriber reads the store first, then drops feed steps whose seq it has
 * already seen. In cluster mode (`backplane` given) a run's steps also go to the other nodes, and
 * a node holds one backplane subscription per interaction it has local subscribers for, however
 * many: a stream opened on any node gets a run's steps live wherever the run is.
 */
export class StepFeed implements InteractionFeed {
  private readonly listeners = new Map<string, Set<Listener>>()
  /** Per watched interaction, the end of its backplane subscription. */
  private readonly remote = new Map<string, () => void>()

  constructor(private readonly backplane?: Backplane) {}

  subscribe(id: string, listener: Listener): () => void {
    let set = this.listeners.get(id)
    if (set === undefined) {
      this.listeners.set(id, (set = new Set()))
      // an id no interaction can have has no topic (and no run anywhere to hear from)
      if (this.backplane !== undefined && INTERACTION_ID.test(id))
        this.remote.set(
          id,
          this.backplane.subscribe(stepTopic(id), (data) => this.fromRemote(id, data))
        )
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.listeners.get(id) === set) this.forget(id)
    }
  }

  publishStep(id: string, step: InteractionStep): void {
    this.deliverStep(id, step)
    this.backplane?.publish(stepTopic(id), { s: step } satisfies Message)
  }

  /** Tells every subscriber, here and on the other nodes, that the run ended, then forgets them. */
  publishTerminal(header: InteractionHeader): void {
    this.deliverTerminal(header)
    this.backplane?.publish(stepTopic(header.id), { t: header } satisfies Message)
  }

  /** Tells this node's subscribers only that the run ended (the end was read from the store). */
  deliverTerminal(header: InteractionHeader): void {
    const set = this.listeners.get(header.id)
    if (set === undefined) return
    this.forget(header.id)
    for (const l of set) safely(() => l.onTerminal(header))
  }

  /** Interactions with at least one subscriber (a leak check reads it). */
  get watched(): number {
    return this.listeners.size
  }

  /** The ids of the interactions with subscribers on this node. */
  watchedIds(): string[] {
    return [...this.listeners.keys()]
  }

  // once per live step: no copy of the set and no closure per listener (a Set's iteration skips
  // a listener removed meanwhile, and one added meanwhile drops a seq it has already read)
  private deliverStep(id: string, step: InteractionStep): void {
    const set = this.listeners.get(id)
    if (set === undefined) return
    for (const l of set) {
      try {
        l.onStep(step)
      } catch {
        /* the subscriber's own error: its stream closes on its own */
      }
    }
  }

  private forget(id: string): void {
    this.listeners.delete(id)
    const end = this.remote.get(id)
    this.remote.delete(id)
    end?.()
  }

  /** A message from another node's run: only what has the shape of a step or of a header for `id`. */
  private fromRemote(id: string, data: unknown): void {
    if (typeof data !== 'object' || data === null) return
    const m = data as Partial<{ s: InteractionStep; t: InteractionHeader }>
    if (typeof m.s === 'object' && m.s !== null && Number.isSafeInteger(m.s.seq)) this.deliverStep(id, m.s)
    else if (typeof m.t === 'object' && m.t !== null && m.t.id === id) this.deliverTerminal(m.t)
  }
}

// one broken subscriber must not cost the run or the other subscribers their steps
function safely(fn: () => void): void {
  try {
    fn()
  } catch {
    /* the subscriber's own error: its stream closes on its own */
  }
}
