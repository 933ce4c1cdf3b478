import type { InteractionFeed, InteractionHeader, InteractionStep } from './types.js'

type Listener = Parameters<InteractionFeed['subscribe']>[1]

/**
 * The in-process feed of live steps: the run publishes, streams subscribe. It keeps nothing
 * (replay comes from the store), so a subscriber reads the store first, then drops feed steps
 * whose seq it has already seen.
 */
export class StepFeed implements InteractionFeed {
  private readonly listeners = new Map<string, Set<Listener>>()

  subscribe(id: string, listener: Listener): () => void {
    let set = this.listeners.get(id)
    if (set === undefined) this.listeners.set(id, (set = new Set()))
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id)
    }
  }

  publishStep(id: string, step: InteractionStep): void {
    const set = this.listeners.get(id)
    if (set !== undefined) for (const l of [...set]) safely(() => l.onStep(step))
  }

  /** Tells every subscriber the run ended, then forgets them. */
  publishTerminal(header: InteractionHeader): void {
    const set = this.listeners.get(header.id)
    if (set === undefined) return
    this.listeners.delete(header.id)
    for (const l of set) safely(() => l.onTerminal(header))
  }

  /** Interactions with at least one subscriber (a leak check reads it). */
  get watched(): number {
    return this.listeners.size
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
