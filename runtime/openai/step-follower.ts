import type { Interaction, InteractionService, InteractionStep } from '../interactions/index.js'

export interface StepListener {
  /** The record as first read, before any step is passed on. */
  onStart(first: Interaction): void
  onStep(step: InteractionStep): void
  /** Once, with the terminal record (its steps included). */
  onEnd(final: Interaction): void
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED'])

/**
 * Follows one interaction of `owner` from its first step: subscribes to the live feed first, then
 * reads the record, so no step falls between the two (feed steps already read are dropped by seq).
 * Resolves to the record as first read and the unsubscribe function; undefined when not the owner's.
 */
export async function followSteps(
  service: InteractionService,
  owner: string,
  id: string,
  listener: StepListener
): Promise<{ first: Interaction; stop: () => void } | undefined> {
  let last = -1
  let ended = false
  let buffered: InteractionStep[] | undefined = []
  const steps: InteractionStep[] = []
  const take = (s: InteractionStep): void => {
    if (s.seq <= last || ended) return
    last = s.seq
    steps.push(s)
    listener.onStep(s)
  }
  let finalRecord: Interaction | undefined
  const end = (final: Interaction): void => {
    if (ended) return
    ended = true
    unsubscribe()
    listener.onEnd(final)
  }
  const unsubscribe = service.feed.subscribe(id, {
    onStep: (s) => (buffered !== undefined ? buffered.push(s) : take(s)),
    onTerminal: (h) => {
      const final = { ...h, steps: [...steps] }
      if (buffered !== undefined) finalRecord = final
      else end(final)
    }
  })
  const first = await service.get(owner, id)
  if (first === undefined) {
    unsubscribe()
    return undefined
  }
  listener.onStart(first)
  for (const s of first.steps) take(s)
  const pending = buffered
  buffered = undefined
  for (const s of pending) take(s)
  if (TERMINAL.has(first.status)) end(first)
  else if (finalRecord !== undefined) end({ ...finalRecord, steps: [...steps] })
  return { first, stop: unsubscribe }
}
